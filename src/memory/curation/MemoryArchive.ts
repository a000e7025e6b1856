/**
 * Invalidated facts live in `memory_unit_archive`, not in `memory_units`: recall, consolidation and the brain read
 * only live rows, so nothing needs a "skip invalidated" filter. Moving a fact out deletes it with what rests on it
 * (`deleteEverythingDerived`, kind `invalidate`: entity counts recounted, its observations released, opinions and
 * dream evidence gone, the change log told by the trigger); moving it back
 * inserts the row as it was under a new `seq`, so each bank brain takes it in as a new memory. The causal links
 * it took part in are kept aside and come back with it. Run inside the caller's transaction.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { setEntitiesExactly } from "./ExactEntities.ts"

const causalTypes = ["causes", "caused_by", "enables", "prevents"]

export interface ArchivedRow {
  readonly unitId: string
  readonly unit: Record<string, unknown>
  readonly entityNames: ReadonlyArray<string>
  readonly reason: string | null
  readonly invalidatedAt: Date
}

export const findArchived = Effect.fn("MemoryArchive.find")(function*(bankId: string, unitId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<ArchivedRow>`SELECT unit_id, unit, entity_names, reason, invalidated_at
    FROM memory_unit_archive WHERE bank_id = ${bankId} AND unit_id = ${unitId}`
  return rows[0]
})

/**
 * Copies live rows into the archive as they are, with their entity names and causal links (the rest of their links
 * is derived again when they come back). The caller deletes them from `memory_units`.
 */
export const archiveRows = Effect.fn("MemoryArchive.archiveRows")(function*(
  bankId: string,
  unitIds: ReadonlyArray<string>,
  reason: string | null
) {
  const sql = yield* SqlClient.SqlClient
  if (unitIds.length === 0) return
  yield* sql`
    INSERT INTO memory_unit_archive (unit_id, bank_id, unit, entity_names, causal_links, reason)
    SELECT u.id, u.bank_id, to_jsonb(u),
      coalesce((SELECT array_agg(e.canonical_name ORDER BY e.canonical_name) FROM unit_entities ue
        JOIN entities e ON e.id = ue.entity_id WHERE ue.unit_id = u.id), '{}'),
      coalesce((SELECT jsonb_agg(jsonb_build_object('from_id', l.from_id, 'to_id', l.to_id, 'link_type', l.link_type,
          'weight', l.weight))
        FROM memory_links l WHERE l.bank_id = u.bank_id AND (l.from_id = u.id OR l.to_id = u.id)
          AND l.link_type IN ${sql.in(causalTypes)}), '[]'::jsonb),
      ${reason}
    FROM memory_units u WHERE u.bank_id = ${bankId} AND u.id IN ${sql.in([...unitIds])}
    ON CONFLICT (unit_id) DO NOTHING`
})

/** Why an opinion waits in the archive: a memory it rests on was invalidated. */
export const restingOpinionReason = "rests on an invalidated memory"

/**
 * Moves the live fact into the archive. The live row goes through `remove` (`MemoryRemoval.session(bankId,
 * "invalidate")`): with it go what rests on it (opinions, observations, mental models emptied, dream evidence,
 * anomalies, trajectories through it) and the entities only it named, as for a delete; its chunk, document, access
 * history and dataset sets stay for its restore.
 */
export const moveToArchive = Effect.fn("MemoryArchive.moveOut")(function*(
  bankId: string,
  unitId: string,
  reason: string | null,
  remove: (ids: ReadonlyArray<string>) => Effect.Effect<unknown, SqlError, SqlClient.SqlClient>
) {
  yield* archiveRows(bankId, [unitId], reason)
  // Entities only this fact named go with it, as when a memory is deleted (restoring resolves its names anew).
  yield* remove([unitId])
})

/** Puts the archived fact back as a live one, with its entities and causal links, waiting for consolidation. */
export const restoreFromArchive = Effect.fn("MemoryArchive.moveBack")(function*(bankId: string, unitId: string) {
  const sql = yield* SqlClient.SqlClient
  const archived = yield* findArchived(bankId, unitId)
  if (archived === undefined) return false
  // A new `seq`: the brains find new memories by it. The fact that superseded this one may be gone meanwhile.
  yield* sql`
    INSERT INTO memory_units
    SELECT r.* FROM memory_unit_archive a,
      LATERAL jsonb_populate_record(null::memory_units, a.unit || jsonb_build_object(
        'seq', nextval(pg_get_serial_sequence('memory_units', 'seq')),
        'consolidated_at', null,
        'superseded_by', (SELECT s.id FROM memory_units s WHERE s.id = a.unit->>'superseded_by'))) r
    WHERE a.bank_id = ${bankId} AND a.unit_id = ${unitId}`
  yield* setEntitiesExactly(bankId, unitId, archived.entityNames)
  yield* sql`
    INSERT INTO memory_links (bank_id, from_id, to_id, link_type, weight)
    SELECT ${bankId}, x.from_id, x.to_id, x.link_type, x.weight
    FROM memory_unit_archive a, jsonb_to_recordset(a.causal_links) AS x(from_id text, to_id text, link_type text, weight real)
    WHERE a.bank_id = ${bankId} AND a.unit_id = ${unitId}
      AND EXISTS (SELECT 1 FROM memory_units f WHERE f.id = x.from_id)
      AND EXISTS (SELECT 1 FROM memory_units t WHERE t.id = x.to_id)
    ON CONFLICT DO NOTHING`
  yield* sql`DELETE FROM memory_unit_archive WHERE bank_id = ${bankId} AND unit_id = ${unitId}`
  return true
})

/**
 * Brings back the opinions the archive holds because a memory they rest on was invalidated, once every memory they
 * rest on is live again: those resting on `unitId`, then those resting on them. Answers the ids restored (the caller
 * links them again). An opinion still resting on another invalidated memory waits for that one's restore.
 */
export const restoreRestingOpinions = Effect.fn("MemoryArchive.restoreRestingOpinions")(function*(
  bankId: string,
  unitId: string
) {
  const sql = yield* SqlClient.SqlClient
  const restored: Array<string> = []
  let from = [unitId]
  while (from.length > 0) {
    const ready = yield* sql<{ unitId: string }>`SELECT a.unit_id FROM memory_unit_archive a
      WHERE a.bank_id = ${bankId} AND a.unit->>'fact_type' = 'opinion'
        AND jsonb_typeof(a.unit->'source_fact_ids') = 'array' AND (a.unit->'source_fact_ids') ?| ${from}::text[]
        AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(a.unit->'source_fact_ids') s (id)
          WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.bank_id = ${bankId} AND u.id = s.id))`
    from = []
    for (const row of ready) {
      if (yield* restoreFromArchive(bankId, row.unitId)) from.push(row.unitId)
    }
    restored.push(...from)
  }
  return restored
})
