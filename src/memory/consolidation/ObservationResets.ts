/**
 * Undoing consolidation so it can be redone: observations whose facts were deleted (a memory removed, a
 * document replaced or removed) are dropped and their remaining facts queued again; one fact's observations can
 * be reset; and a bank can start over (regeneration, `DELETE observations`). Facts are never touched beyond their consolidated mark.
 * Run inside the caller's transaction.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { forgetAnalyses } from "./FactAnalyses.ts"

/** Facts go back to "waiting for consolidation". */
const requeue = (sql: SqlClient.SqlClient, bankId: string, ids: ReadonlyArray<string>) =>
  ids.length === 0 ? Effect.void : sql`UPDATE memory_units SET consolidated_at = NULL
    WHERE bank_id = ${bankId} AND id IN ${sql.in([...ids])} AND fact_type IN ('world', 'experience')`.pipe(
    Effect.asVoid
  )

/** Deletes the given observations and requeues every fact they rested on; returns how many went. */
const dropAndRequeue = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  bankId: string,
  observations: ReadonlyArray<{ readonly id: string; readonly sourceFactIds: ReadonlyArray<string> | null }>
) {
  if (observations.length === 0) return 0
  yield* requeue(sql, bankId, [...new Set(observations.flatMap((row) => row.sourceFactIds ?? []))])
  yield* sql`DELETE FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'observation'
    AND id IN ${sql.in(observations.map((row) => row.id))}`
  return observations.length
})

/**
 * Called in the transaction that deletes facts (a memory, a document, a replaced document's old chunks): the
 * observations resting on any of them go and their surviving facts wait for consolidation again. Found through
 * the GIN index on `source_fact_ids`, so it costs what the deletion touched, not a scan of the bank.
 */
export const releaseObservationsOf = Effect.fn("ObservationResets.releaseObservationsOf")(function*(
  bankId: string,
  deletedFactIds: ReadonlyArray<string>
) {
  if (deletedFactIds.length === 0) return 0
  forgetAnalyses(deletedFactIds)
  const sql = yield* SqlClient.SqlClient
  const broken = yield* sql<{ id: string; sourceFactIds: ReadonlyArray<string> | null }>`
    SELECT o.id, o.source_fact_ids FROM memory_units o
    WHERE o.bank_id = ${bankId} AND o.fact_type = 'observation' AND o.source_fact_ids && ${[...deletedFactIds]}::text[]`
  const gone = new Set(deletedFactIds)
  return yield* dropAndRequeue(
    sql,
    bankId,
    broken.map((row) => ({
      id: row.id,
      sourceFactIds: (row.sourceFactIds ?? []).filter((id) => !gone.has(id))
    }))
  )
})

/** The observations resting on one fact; they go and all their facts (this one included) are requeued. */
export const resetFactObservations = Effect.fn("ObservationResets.resetFact")(
  function*(bankId: string, factId: string) {
    const sql = yield* SqlClient.SqlClient
    const observations = yield* sql<{ id: string; sourceFactIds: ReadonlyArray<string> | null }>`
    SELECT o.id, o.source_fact_ids FROM memory_units o
    WHERE o.bank_id = ${bankId} AND o.fact_type = 'observation' AND o.source_fact_ids @> ARRAY[${factId}]::text[]`
    const deleted = yield* dropAndRequeue(sql, bankId, observations)
    yield* requeue(sql, bankId, [factId])
    return deleted
  }
)

/** Every observation of the bank goes and every fact waits for consolidation again. */
export const resetBank = Effect.fn("ObservationResets.resetBank")(function*(bankId: string) {
  const sql = yield* SqlClient.SqlClient
  const deleted =
    yield* sql`DELETE FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'observation' RETURNING id`
  yield* sql`UPDATE memory_units SET consolidated_at = NULL
    WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience') AND consolidated_at IS NOT NULL`
  return deleted.length
})
