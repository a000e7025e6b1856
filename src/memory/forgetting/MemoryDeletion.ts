/**
 * The ordinary delete paths (a memory by id, clearing a bank's memories, deleting a document) delete with everything
 * derived, as forget and the sweeps do (`deleteEverythingDerived`): opinions resting on the memories (transitively),
 * the observations built on them released, mental models citing them emptied and queued for refresh, dream evidence,
 * anomalies (but those a user suppressed), access history, dataset sets, orphaned chunks and documents. The caller's work runs in one transaction
 * under the bank's write lock (all of it or none), after the bank's reads' buffered access events are written (so the
 * deletion removes them too); the emptied models' refreshes are queued in the same transaction; after the commit the
 * brain catches up, consolidation is woken and the kept `.brain` file is removed (written again on the brain's next
 * release). `makeMemoryRemoval` gives the same to paths that hold their own transaction (a document replaced by a
 * retain, an invalidation), with what they keep (`RemovalKind`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { AccessTelemetry } from "../../activity/AccessTelemetry.ts"
import { BankActors } from "../../bank/BankActors.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import { BankLocks } from "../../bank/BankLocks.ts"
import { OperationStore } from "../../bank/OperationStore.ts"
import type { ForgetRemoved } from "../../domain/Forget.ts"
import { makeEntityRequests } from "../../entities/EntityRequests.ts"
import { type RefreshPayload, refreshTaskType } from "../../mentalmodels/RefreshTask.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { addRemoved, deleteEverythingDerived, noneRemoved, type RemovalKind, sweptOnly } from "./DerivedDeletion.ts"

/**
 * How many memories one `deleteEverythingDerived` call takes: its statements bind each id (a clear of a big bank would
 * pass PostgreSQL's 65,535 parameters) and match mental models against at most 2,000 of them.
 */
const batchSize = 1_000

export interface Removed {
  /** Every memory deleted: those asked for and the opinions resting on them. */
  readonly memories: ReadonlyArray<string>
  readonly removed: ForgetRemoved
  /** Entities the deleted memories named (a replace prunes the unnamed ones after writing its facts). */
  readonly namedEntityIds: ReadonlyArray<string>
}

/** What a removal leaves to do after its transaction commits (`MemoryRemoval.afterCommit`). */
export interface AfterRemoval {
  readonly deleted: number
  /** A consolidation run was queued for the facts the released observations leave behind. */
  readonly consolidationQueued: boolean
  /** Refresh operations were queued for emptied mental models. */
  readonly modelsQueued: boolean
  /** A trajectory recompute was queued for entities whose trajectory ran through a removed memory. */
  readonly trajectoriesQueued: boolean
}

const nothingRemoved: AfterRemoval = {
  deleted: 0,
  consolidationQueued: false,
  modelsQueued: false,
  trajectoriesQueued: false
}

const addAfterRemoval = (a: AfterRemoval, b: AfterRemoval): AfterRemoval => ({
  deleted: a.deleted + b.deleted,
  consolidationQueued: a.consolidationQueued || b.consolidationQueued,
  modelsQueued: a.modelsQueued || b.modelsQueued,
  trajectoriesQueued: a.trajectoriesQueued || b.trajectoriesQueued
})

/** Deletes the memories with everything derived, in the deletion's transaction; `documentId` goes when unused. */
export type RemoveMemories = (
  ids: ReadonlyArray<string>,
  documentId?: string
) => Effect.Effect<Removed, SqlError, SqlClient.SqlClient>

/** The same, for a caller that runs its own transaction: its outcome is what `afterCommit` needs. */
type RemoveInTransaction = (
  bankId: string,
  ids: ReadonlyArray<string>,
  options: { readonly kind: RemovalKind; readonly documentId?: string }
) => Effect.Effect<Removed & { readonly after: AfterRemoval }, SqlError, SqlClient.SqlClient>

/**
 * Removing memories with everything derived from them for callers that hold their own transaction (a retain that
 * replaces a document, an invalidation) and for `makeMemoryDeletion`: a `session` of one transaction's removals, whose
 * `remove` runs in the transaction under the bank's write lock, queueing the emptied mental models' refreshes there
 * (they commit with it), and whose `afterCommit` tells the brain, wakes the bank and removes the kept `.brain` file.
 * `flush` writes the bank's reads' buffered access events first (not other banks'), so the removal takes them.
 */
export const makeMemoryRemoval = Effect.gen(function*() {
  const consolidation = yield* makeConsolidationRequests
  const telemetry = yield* AccessTelemetry
  const graph = yield* GraphRecall
  const brains = yield* BankBrains
  const operations = yield* OperationStore
  const actors = yield* BankActors
  const requests = yield* makeEntityRequests

  const remove: RemoveInTransaction = (bankId, ids, options) =>
    Effect.gen(function*() {
      const memories: Array<string> = []
      const named = new Set<string>()
      let removed = noneRemoved
      let wake = false
      let models = 0
      const trajectories = new Set<string>()
      for (let start = 0; start < Math.max(ids.length, 1); start += batchSize) {
        const batch = ids.slice(start, start + batchSize)
        const derived = yield* deleteEverythingDerived(consolidation, bankId, {
          ...sweptOnly(batch),
          documentId: options.documentId ?? null,
          kind: options.kind
        })
        memories.push(...derived.deletion.memories)
        removed = addRemoved(removed, derived.removed)
        for (const id of derived.namedEntityIds) named.add(id)
        wake ||= derived.deletion.consolidationQueued
        for (const id of derived.trajectoryEntityIds) trajectories.add(id)
        // Queued with the deletion, so a crash cannot leave a model emptied and never refreshed.
        for (const id of derived.models) {
          yield* operations.create({
            bankId,
            taskType: refreshTaskType,
            payload: { mental_model_id: id, reason: "manual" } satisfies RefreshPayload,
            itemsCount: 1
          })
          models++
        }
      }
      // The trajectories that ran through a removed memory are computed again without it, by a run queued with the
      // removal (or one already waiting): a read once it is done finds the trajectory, or why there is none (too few
      // facts left, the entity pruned). The bank's automatic trajectories setting does not matter: these existed.
      yield* requests.queueTrajectories(bankId, trajectories, "removal")
      return {
        memories,
        removed,
        namedEntityIds: [...named],
        after: {
          deleted: memories.length,
          consolidationQueued: wake,
          modelsQueued: models > 0,
          trajectoriesQueued: trajectories.size > 0
        }
      }
    })

  const afterCommit = Effect.fn("Forgetting.afterRemoval")(function*(bankId: string, after: AfterRemoval) {
    if (after.deleted === 0 && !after.modelsQueued) return
    yield* graph.changed(bankId)
    if (after.consolidationQueued) yield* consolidation.wake(bankId)
    if (after.modelsQueued || after.trajectoriesQueued) yield* actors.wake(bankId)
    // The kept file is removed, not written again: writing it costs what the bank holds (the whole brain, loaded and
    // caught up first), and an agent deletes memories one at a time. It is written again when the brain is next
    // released or the service stops; a start before that builds the brain from the tables.
    yield* brains.updateKeptFile(bankId, "drop")
  })

  /** One transaction's removals of a kind, added up for its `afterCommit`. */
  const session = (bankId: string, kind: RemovalKind) => {
    let after = nothingRemoved
    const removeInSession: RemoveMemories = (ids, documentId) =>
      remove(bankId, ids, { kind, ...(documentId === undefined ? {} : { documentId }) }).pipe(
        Effect.map((removed) => {
          after = addAfterRemoval(after, removed.after)
          return removed
        })
      )
    return { remove: removeInSession, afterCommit: Effect.suspend(() => afterCommit(bankId, after)) }
  }

  return { session, flush: telemetry.writeBufferedOf }
})

export const makeMemoryDeletion = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const locks = yield* BankLocks
  const removal = yield* makeMemoryRemoval

  return <A, E>(
    bankId: string,
    work: (remove: RemoveMemories) => Effect.Effect<A, E | SqlError, SqlClient.SqlClient>
  ) =>
    Effect.gen(function*() {
      const deletion = removal.session(bankId, "delete")
      yield* removal.flush(bankId)
      const value = yield* locks.withWriteLock(bankId)(
        work(deletion.remove).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))
      ).pipe(Effect.catchTag("SqlError", (error) => Effect.die(error)))
      yield* deletion.afterCommit
      return value
    }).pipe(Effect.withSpan("Forgetting.deleteMemories", { attributes: { bankId } }))
})
