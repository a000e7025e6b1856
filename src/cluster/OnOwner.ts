/**
 * Runs a request that belongs on a bank's owner (a synchronous retain, influence analytics): here when this node
 * owns the bank's shard, else on the owner through the cluster. When the owner cannot take it (no owner during a
 * hand-over, a runner that died mid-call) the request runs here against the shared database, which is always
 * correct, only without the owner's warm brain. Recall has its own copy of this in RoutedRecall (its own metric).
 */
import { Cause, Duration, Effect, Metric } from "effect"
import type { ClusterNode } from "./ClusterNode.ts"

const requests = Metric.counter("engram_cluster_requests", {
  description:
    "Requests that belong on a bank's owner, by kind and by where they were answered: here as the owner, on the owner, for another node, or here after the owner could not be reached"
})

export type Way = "owner" | "forwarded" | "for_another_node" | "local_fallback"

export const countRequest = (kind: string, way: Way) => Metric.update(Metric.withAttributes(requests, { kind, way }), 1)

export const onOwner = <A, E>(options: {
  readonly kind: string
  readonly node: ClusterNode["Service"]
  readonly bankId: string
  readonly local: Effect.Effect<A, E>
  readonly remote: Effect.Effect<A, E>
  /** How long the sender waits for the owner. */
  readonly timeout: Duration.Input
  /** What answers when the owner took longer (running it here too could do the work twice). */
  readonly onTimeout: Effect.Effect<A, E>
}): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    const { kind, local } = options
    if (yield* options.node.ownsBank(options.bankId)) {
      yield* countRequest(kind, "owner")
      return yield* local
    }
    return yield* options.remote.pipe(
      Effect.timeout(options.timeout),
      Effect.tap(() => countRequest(kind, "forwarded")),
      Effect.catchCauseIf(
        (cause) => Cause.hasDies(cause) && !Cause.hasFails(cause),
        (cause) =>
          Effect.logWarning(`the bank's owner could not take a ${kind}; running it here`, cause).pipe(
            Effect.andThen(countRequest(kind, "local_fallback")),
            Effect.andThen(local)
          )
      ),
      Effect.catchTag("TimeoutError", () =>
        Effect.logWarning(`the bank's owner took too long to answer a ${kind}`).pipe(Effect.andThen(options.onTimeout)))
    ) as Effect.Effect<A, E>
  }).pipe(Effect.annotateLogs({ bankId: options.bankId }))
