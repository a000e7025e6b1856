/**
 * The bank actor as an `effect/cluster` entity keyed by bank id: the messages other nodes send to the runner that
 * owns the bank's shard. The operations table stays the source of truth; these messages only say "look for work"
 * or ask the owner about the work it is running.
 */
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"

/**
 * Look for pending work; fire-and-forget for the sender. Volatile on purpose: the pending row in the operations
 * table is the durable message, and a shard's new owner sweeps its banks' pending and orphaned rows when it takes
 * the shard (ClusterBankActors), so a wake-up lost with a dying runner loses nothing. A persisted wake-up would
 * add a row per submission to the cluster's message table, which effect/cluster 4.1 never deletes.
 */
export const Wake = Rpc.make("Wake")

/** Interrupt the operation if the owner is running it (its row must already say `cancelled`). */
export const Interrupt = Rpc.make("Interrupt", { payload: { operationId: Schema.String } })

export const ActorStatusSchema = Schema.Struct({
  active: Schema.Boolean,
  currentOperationId: Schema.NullOr(Schema.String),
  circuit: Schema.Literals(["closed", "open", "half_open"]),
  retryAfterMs: Schema.NullOr(Schema.Number)
})

/** The bank actor's status on its owner: whether it runs, what it runs, its circuit breaker. */
export const Status = Rpc.make("Status", { success: ActorStatusSchema })

/**
 * Another node wrote to the bank (a memory or document deleted, tags changed...): the owner's brain catches up
 * from the tables, as after its own writes. Fire-and-forget and volatile like `Wake`: a brain that misses it is
 * one a moving shard drops anyway, and its new owner builds the next from the tables.
 */
export const Changed = Rpc.make("Changed")

export const BankEntity = Entity.make("Bank", [Wake, Interrupt, Status, Changed])
