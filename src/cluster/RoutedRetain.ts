/**
 * Synchronous retain on a cluster node: run by the bank's owner (src/cluster/OnOwner.ts), whose brain of the bank
 * then takes the write as a delta at once instead of staying unaware of it. Asynchronous retains are operations,
 * which run on the owner anyway. On a single process this is the plain retain.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { Retain } from "../memory/retain/Retain.ts"
import { ClusterNode } from "./ClusterNode.ts"
import { countRequest, onOwner } from "./OnOwner.ts"

/**
 * A retain with a language model can take minutes. Past this the sender answers 503 rather than storing the
 * items itself, since the owner may still be storing them (a retry is safe: stored items are skipped as duplicates).
 */
const ownerTimeout = Duration.minutes(5)

export const RoutedRetain = Layer.effect(
  Retain,
  Effect.gen(function*() {
    const local = yield* Retain
    const node = yield* ClusterNode
    if (Option.isNone(node.reads)) return local
    const reads = node.reads.value

    yield* reads.serveRetain((bankId, request) =>
      Effect.andThen(countRequest("retain", "for_another_node"), local.retainNow(bankId, request))
    )

    return Retain.of({
      ...local,
      retainNow: (bankId, request) =>
        onOwner({
          kind: "retain",
          node,
          bankId,
          local: local.retainNow(bankId, request),
          remote: reads.retainOnOwner(bankId, request),
          timeout: ownerTimeout,
          onTimeout: Effect.fail(
            new ServiceUnavailable({
              detail:
                "the bank's owner did not finish the retain in time; retrying is safe (stored items are skipped as duplicates)"
            })
          )
        })
    })
  })
).pipe(Layer.provide(Retain.layer))
