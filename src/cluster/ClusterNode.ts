/** What this node is in a cluster, for `/health` and `/metrics`; `off` on a single process. */
import { Context, Effect, Layer, Option, type Scope } from "effect"
import type { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import type { BrainInfluenceResponse } from "../domain/BrainInfluence.ts"
import type { RetainRequest } from "../domain/Memory.ts"
import type { RecallRequest, RecallResponse } from "../domain/Recall.ts"
import type { InfluenceOptions } from "../influence/BrainInfluence.ts"
import type { RetainOutcome } from "../memory/retain/Retain.ts"
import type { ClusterMode } from "./ClusterSettings.ts"

export type RecallFunction = (
  bankId: string,
  request: RecallRequest
) => Effect.Effect<RecallResponse, NotFound | ValidationError | ServiceUnavailable>

export type RetainFunction = (
  bankId: string,
  request: RetainRequest
) => Effect.Effect<RetainOutcome, ServiceUnavailable | ValidationError>

export type InfluenceFunction = (
  bankId: string,
  options: InfluenceOptions
) => Effect.Effect<BrainInfluenceResponse, NotFound>

/**
 * Requests sent to the owner of a bank's shard (src/cluster/BankReads.ts). Each `...OnOwner` fails with the
 * owner's answer, or dies when the owner is unreachable; each `serve...` answers other nodes' requests with the
 * given function (on a runner; a client owns nothing and serves nothing).
 */
export interface ReadRouting {
  readonly recallOnOwner: RecallFunction
  readonly serve: (recall: RecallFunction) => Effect.Effect<void>
  readonly retainOnOwner: RetainFunction
  readonly serveRetain: (retain: RetainFunction) => Effect.Effect<void>
  readonly influenceOnOwner: InfluenceFunction
  readonly serveInfluence: (influence: InfluenceFunction) => Effect.Effect<void>
}

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
  /** Routing of brain reads to the bank's owner; none on a single process. */
  readonly reads: Option.Option<ReadRouting>
  /** This node wrote to the bank: the owner's brain (when another node owns it) catches up. */
  readonly changedHere: (bankId: string) => Effect.Effect<void>
  /**
   * Runs a background loop that scans every bank (webhook delivery, dream schedules, the brain warm-up) on exactly
   * one node: forked here on a single process; on a cluster, on the one runner that owns the singleton's shard
   * (effect/cluster `registerSingleton`), moving to another runner when that one dies or leaves; never on a client.
   * `run` gets a scope of its own that closes when the loop stops here (its shard moved): fork its work into it.
   */
  readonly singleton: (
    name: string,
    run: Effect.Effect<void, never, Scope.Scope>
  ) => Effect.Effect<void, never, Scope.Scope>
}>()("engram/cluster/ClusterNode") {
  static readonly off = Layer.succeed(
    ClusterNode,
    ClusterNode.of({
      role: "off",
      shardsOwned: Effect.succeed(0),
      entityCount: Effect.succeed(0),
      messagesInFlight: Effect.succeed(0),
      ownsBank: () => Effect.succeed(true),
      reads: Option.none(),
      changedHere: () => Effect.void,
      singleton: (_name, run) => Effect.asVoid(Effect.forkScoped(run))
    })
  )
}
