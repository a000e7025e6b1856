/**
 * Influence analytics on a cluster node: computed by the bank's owner (src/cluster/OnOwner.ts), which ranks the
 * bank's memories by PageRank over the brain it keeps warm and current, instead of building a brain here that this
 * node's cache would not know to refresh after writes on other nodes. On a single process this is the plain view.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { BrainInfluence } from "../influence/BrainInfluence.ts"
import { ClusterNode } from "./ClusterNode.ts"
import { countRequest, onOwner } from "./OnOwner.ts"

/** Longer than the view should take on its owner; past it the sender computes it itself. */
const ownerTimeout = Duration.seconds(20)

export const RoutedInfluence = Layer.effect(
  BrainInfluence,
  Effect.gen(function*() {
    const local = yield* BrainInfluence
    const node = yield* ClusterNode
    if (Option.isNone(node.reads)) return local
    const reads = node.reads.value

    yield* reads.serveInfluence((bankId, options) =>
      Effect.andThen(countRequest("influence", "for_another_node"), local.analytics(bankId, options))
    )

    return BrainInfluence.of({
      analytics: (bankId, options) => {
        const here = local.analytics(bankId, options)
        return onOwner({
          kind: "influence",
          node,
          bankId,
          local: here,
          remote: reads.influenceOnOwner(bankId, options),
          timeout: ownerTimeout,
          onTimeout: Effect.andThen(countRequest("influence", "local_fallback"), here)
        })
      }
    })
  })
).pipe(Layer.provide(BrainInfluence.layer))
