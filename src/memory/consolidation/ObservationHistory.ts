/**
 * An observation's history with its source facts resolved to text (and, for a fact, the observations resting on
 * it). Reads only; a source fact deleted since shows with `text: null` rather than vanishing from the record.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { MemoryHistoryResponse } from "../../domain/Consolidation.ts"
import { NotFound } from "../../domain/Errors.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"

interface HistoryRow {
  readonly version: number
  readonly change: "created" | "updated" | "merged"
  readonly text: string
  readonly previousText: string | null
  readonly sourceFactIds: ReadonlyArray<string> | null
  readonly addedFactIds: ReadonlyArray<string> | null
  readonly mergedObservationIds: ReadonlyArray<string> | null
  readonly operationId: string | null
  readonly createdAt: Date
}

interface FactRow {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly occurredStart: Date | null
  readonly mentionedAt: Date | null
}

export const memoryHistory = Effect.fn("ObservationHistory.read")(function*(bankId: string, memoryId: string) {
  const sql = yield* SqlClient.SqlClient
  const units = yield* sql<{ id: string; text: string; factType: string; sourceFactIds: ReadonlyArray<string> | null }>`
    SELECT id, text, fact_type, source_fact_ids FROM memory_units WHERE bank_id = ${bankId} AND id = ${memoryId}`.pipe(
    Effect.orDie
  )
  const unit = units[0]
  if (unit === undefined) return yield* NotFound.of("memory", memoryId)

  const [history, observations] = yield* Effect.all([
    sql<HistoryRow>`SELECT version, change, text, previous_text, source_fact_ids, added_fact_ids,
        merged_observation_ids, operation_id, created_at
      FROM observation_history WHERE observation_id = ${memoryId} ORDER BY version, created_at`,
    unit.factType === "observation" ? Effect.succeed([]) : sql<{ id: string; text: string }>`
      SELECT id, text FROM memory_units
      WHERE bank_id = ${bankId} AND fact_type = 'observation' AND source_fact_ids @> ARRAY[${memoryId}]::text[]
      ORDER BY updated_at DESC`
  ]).pipe(Effect.orDie)

  const wanted = [...new Set([...(unit.sourceFactIds ?? []), ...history.flatMap((row) => row.addedFactIds ?? [])])]
  const facts = wanted.length === 0 ? [] : yield* sql<FactRow>`
    SELECT id, text, fact_type, occurred_start, mentioned_at FROM memory_units
    WHERE bank_id = ${bankId} AND id IN ${sql.in(wanted)}`.pipe(Effect.orDie)
  const byId = new Map(facts.map((fact) => [fact.id, fact]))
  const resolve = (id: string) => {
    const fact = byId.get(id)
    return {
      id,
      text: fact?.text ?? null,
      type: fact?.factType ?? null,
      occurred_start: iso(fact?.occurredStart ?? null),
      mentioned_at: iso(fact?.mentionedAt ?? null)
    }
  }
  return {
    memory_id: unit.id,
    bank_id: bankId,
    fact_type: unit.factType,
    text: unit.text,
    source_facts: (unit.sourceFactIds ?? []).map(resolve),
    observations: observations.map((row) => ({ id: row.id, text: row.text })),
    history: history.map((row) => ({
      version: row.version,
      change: row.change,
      text: row.text,
      previous_text: row.previousText,
      source_fact_ids: row.sourceFactIds ?? [],
      new_facts: (row.addedFactIds ?? []).map(resolve),
      merged_observation_ids: row.mergedObservationIds ?? [],
      operation_id: row.operationId,
      created_at: row.createdAt.toISOString()
    }))
  } satisfies typeof MemoryHistoryResponse.Type
})
