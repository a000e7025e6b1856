/**
 * The ordinary delete paths (a memory by id, clearing a bank's memories, deleting a document) delete with everything
 * derived, as forget and the sweeps do (`deleteEverythingDerived`): opinions resting on the memories (transitively),
 * the observations built on them released, mental models citing them emptied and queued for refresh, dream evidence,
 * anomalies (but those a user suppressed), access history, dataset sets, orphaned chunks and documents. The caller's work runs in one transaction
 * under the bank's write lock (all of it or none), after the reads' buffered access events are written (so the
 * deletion removes them too); after the commit the brain catches up, consolidation is woken, the emptied models are
 * queued for refresh and the kept `.brain` file is removed (written again on the brain's next release).
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
import { type RefreshPayload, refreshTaskType } from "../../mentalmodels/RefreshTask.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { addRemoved, deleteEverythingDerived, noneRemoved, sweptOnly } from "./DerivedDeletion.ts"

/**
 * How many memories one `deleteEverythingDerived` call takes: its statements bind each id (a clear of a big bank would
 * pass PostgreSQL's 65,535 parameters) and match mental models against at most 2,000 of them.
 */
const batchSize = 1_000

export interface Removed {
  /** Every memory deleted: those asked for and the opinions resting on them. */
  readonly memories: ReadonlyArray<string>
  readonly removed: ForgetRemoved
}

/** Deletes the memories with everything derived, in the deletion's transaction; `documentId` goes when unused. */
export type RemoveMemories = (
  ids: ReadonlyArray<string>,
  documentId?: string
) => Effect.Effect<Removed, SqlError, SqlClient.SqlClient>

export const makeMemoryDeletion = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const locks = yield* BankLocks
  const consolidation = yield* makeConsolidationRequests
  const telemetry = yield* AccessTelemetry
  const graph = yield* GraphRecall
  const brains = yield* BankBrains
  const operations = yield* OperationStore
  const actors = yield* BankActors

  return <A, E>(
    bankId: string,
    work: (remove: RemoveMemories) => Effect.Effect<A, E | SqlError, SqlClient.SqlClient>
  ) =>
    Effect.gen(function*() {
      const models = new Set<string>()
      let deleted = 0
      let wake = false
      const remove: RemoveMemories = (ids, documentId) =>
        Effect.gen(function*() {
          const memories: Array<string> = []
          let removed = noneRemoved
          for (let start = 0; start < Math.max(ids.length, 1); start += batchSize) {
            const batch = ids.slice(start, start + batchSize)
            const derived = yield* deleteEverythingDerived(consolidation, bankId, {
              ...sweptOnly(batch),
              documentId: documentId ?? null,
              keepSuppressedAnomalies: true
            })
            memories.push(...derived.deletion.memories)
            removed = addRemoved(removed, derived.removed)
            for (const id of derived.models) models.add(id)
            wake ||= derived.deletion.consolidationQueued
          }
          deleted += memories.length
          return { memories, removed }
        })

      yield* telemetry.flush
      const value = yield* locks.withWriteLock(bankId)(
        work(remove).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))
      ).pipe(Effect.catchTag("SqlError", (error) => Effect.die(error)))
      if (deleted === 0 && models.size === 0) return value
      yield* graph.changed(bankId)
      if (wake) yield* consolidation.wake(bankId)
      for (const id of models) {
        yield* operations.create({
          bankId,
          taskType: refreshTaskType,
          payload: { mental_model_id: id, reason: "manual" } satisfies RefreshPayload,
          itemsCount: 1
        })
      }
      if (models.size > 0) yield* actors.wake(bankId)
      // The kept file is removed, not written again: writing it costs what the bank holds (the whole brain, loaded and
      // caught up first), and an agent deletes memories one at a time. It is written again when the brain is next
      // released or the service stops; a start before that builds the brain from the tables.
      yield* brains.updateKeptFile(bankId, "drop")
      return value
    }).pipe(Effect.withSpan("Forgetting.deleteMemories", { attributes: { bankId } }))
})
