/** What this node is in a cluster, for `/health` and `/metrics`; `off` on a single process. */
import { Context, Effect, Layer } from "effect"
import type { ClusterMode } from "./ClusterSettings.ts"

export class ClusterNode extends Context.Service<ClusterNode, {
  readonly role: ClusterMode
  /** Shards whose lock this node holds (always 0 on a client). */
  readonly shardsOwned: Effect.Effect<number>
  /** Bank entities alive on this node. */
  readonly entityCount: Effect.Effect<number>
  /** Messages this node sent to bank entities and has not seen through yet. */
  readonly messagesInFlight: Effect.Effect<number>
  /** Whether this node currently owns the bank's shard. */
  readonly ownsBank: (bankId: string) => Effect.Effect<boolean>
}>()("engram/cluster/ClusterNode") {
  static readonly off = Layer.succeed(
    ClusterNode,
    ClusterNode.of({
      role: "off",
      shardsOwned: Effect.succeed(0),
      entityCount: Effect.succeed(0),
      messagesInFlight: Effect.succeed(0),
      ownsBank: () => Effect.succeed(true)
    })
  )
}
