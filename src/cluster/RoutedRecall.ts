/**
 * Recall on a cluster node: answered here when this runner owns the bank's shard, else sent to the owner, whose
 * brain for the bank is built and kept warm (one brain per bank in the cluster, where its writes happen). A
 * recall the owner cannot take (no owner during a hand-over, a runner that died mid-call) is answered here from
 * the shared database instead of failing: every node can answer any recall correctly, the owner only answers it
 * from a warm brain. On a single process this is the plain recall.
 */
import { Cause, Duration, Effect, Layer, Metric, Option } from "effect"
import { Recall } from "../memory/recall/Recall.ts"
import { ClusterNode, type RecallFunction } from "./ClusterNode.ts"

/** Longer than any recall the owner should take; past it the sender stops waiting and answers itself. */
const ownerTimeout = Duration.seconds(20)

const recalls = Metric.counter("engram_cluster_recalls", {
  description:
    "Recalls by where they were answered: here as the owner, on the owner, for another node, or here after the owner could not be reached"
})
const count = (way: "owner" | "forwarded" | "for_another_node" | "local_fallback") =>
  Metric.update(Metric.withAttributes(recalls, { way }), 1)

export const RoutedRecall = Layer.effect(
  Recall,
  Effect.gen(function*() {
    const local = yield* Recall
    const node = yield* ClusterNode
    if (Option.isNone(node.reads)) return local
    const reads = node.reads.value

    yield* reads.serve((bankId, request) => Effect.andThen(count("for_another_node"), local.recall(bankId, request)))

    const recall: RecallFunction = (bankId, request) =>
      Effect.gen(function*() {
        if (yield* node.ownsBank(bankId)) {
          yield* count("owner")
          return yield* local.recall(bankId, request)
        }
        return yield* reads.recallOnOwner(bankId, request).pipe(
          Effect.timeout(ownerTimeout),
          Effect.tap(() => count("forwarded")),
          Effect.catchCauseIf(
            (cause) => Cause.hasDies(cause) && !Cause.hasFails(cause),
            (cause) =>
              Effect.logWarning("the bank's owner could not answer a recall; answering it here", cause).pipe(
                Effect.andThen(count("local_fallback")),
                Effect.andThen(local.recall(bankId, request))
              )
          ),
          Effect.catchTag("TimeoutError", () =>
            Effect.logWarning("the bank's owner took too long to answer a recall; answering it here").pipe(
              Effect.andThen(count("local_fallback")),
              Effect.andThen(local.recall(bankId, request))
            ))
        )
      }).pipe(Effect.annotateLogs({ bankId }))

    // Chosen sources are for parity tests and benchmarks on one node: always answered here.
    return Recall.of({ recall, recallWith: local.recallWith })
  })
).pipe(Layer.provide(Recall.layer))
