/**
 * Keeps each entity's mention count and first/last mention time equal to a recount over the facts that name it
 * (observations restate mentions, so they never count). Retain only adds mentions, so it adds to the stored
 * values, which costs the size of the batch however often an entity was named before. Deleting facts is the
 * one thing an addition cannot undo, so every path that deletes facts recounts the entities those facts named.
 */
import { Effect } from "effect"
import { SqlClient, type Statement } from "effect/sql"

/** When a fact was said, as the entity's first/last seen counts it. */
const saidAt = "coalesce(u.mentioned_at, u.created_at)"

/**
 * Links new units to their entities and adds their mentions. Only rows this statement inserted count, so a
 * link that already existed is not counted twice. An entity with no mentions left takes the new times as they
 * are: its stored times were those of facts since deleted.
 */
export const linkMentions = Effect.fn("EntityMentions.link")(function*(
  links: ReadonlyArray<{ readonly unitId: string; readonly entityId: string }>
) {
  if (links.length === 0) return
  const sql = yield* SqlClient.SqlClient
  const said = sql.literal(saidAt)
  yield* sql`
    WITH added AS (
      INSERT INTO unit_entities (unit_id, entity_id, unit_seq)
      SELECT x.unit_id, x.entity_id, u.seq
      FROM jsonb_to_recordset(${
    JSON.stringify(links.map((link) => ({ unit_id: link.unitId, entity_id: link.entityId })))
  }::jsonb)
        AS x(unit_id text, entity_id text)
      JOIN memory_units u ON u.id = x.unit_id
      ON CONFLICT DO NOTHING
      RETURNING unit_id, entity_id),
    s AS (
      SELECT a.entity_id, count(*)::int AS mentions, min(${said}) AS first_seen, max(${said}) AS last_seen
      FROM added a JOIN memory_units u ON u.id = a.unit_id
      WHERE u.fact_type <> 'observation'
      GROUP BY a.entity_id)
    UPDATE entities e SET mention_count = e.mention_count + s.mentions,
      first_seen = CASE WHEN e.mention_count = 0 THEN s.first_seen ELSE least(e.first_seen, s.first_seen) END,
      last_seen = CASE WHEN e.mention_count = 0 THEN s.last_seen ELSE greatest(e.last_seen, s.last_seen) END
    FROM s WHERE e.id = s.entity_id`
})

/**
 * Recounts the given entities (or all of the bank's) from their remaining facts: after facts were deleted.
 * An entity left with no mentions keeps its last known times, with a count of zero.
 */
export const recountMentions = Effect.fn("EntityMentions.recount")(function*(
  bankId: string,
  entityIds: ReadonlyArray<string> | "all"
) {
  if (entityIds !== "all" && entityIds.length === 0) return
  const sql = yield* SqlClient.SqlClient
  const said = sql.literal(saidAt)
  yield* sql`
    UPDATE entities e SET (mention_count, first_seen, last_seen) = (
      SELECT count(*)::int, coalesce(min(${said}), e.first_seen), coalesce(max(${said}), e.last_seen)
      FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
      WHERE ue.entity_id = e.id AND u.fact_type <> 'observation')
    WHERE e.bank_id = ${bankId} ${entityIds === "all" ? sql`` : sql`AND e.id IN ${sql.in(entityIds)}`}`
})

/**
 * Deletes the bank's memory units matching `where` (a condition on `memory_units`) and takes their mentions off the
 * entities they named: the count goes down by the deleted facts' mentions, and the first/last times are recounted
 * only for an entity that lost the mention its stored time came from. A full recount costs every mention of every
 * entity touched — a sweep deleting 200 facts at a time recounted its bank's busiest entities on every slice (0.4–1.2 s
 * a slice on PostgreSQL at 10k memories) — this costs the deleted mentions, and a recount where a time must move.
 * The entities are read in the same statement, before the cascade removes the units' entity rows.
 */
export const deleteUnitsAndRecount = Effect.fn("EntityMentions.deleteUnits")(function*(
  bankId: string,
  where: Statement.Fragment
) {
  const sql = yield* SqlClient.SqlClient
  const said = sql.literal(saidAt)
  // In one statement, so the times compare at the database's precision (microseconds; a JavaScript Date keeps
  // milliseconds). An entity whose stored first (last) time is no earlier (later) than a deleted mention's may have
  // lost the mention it came from: those are returned, to be recounted.
  const rows = yield* sql<{ id: string | null; boundaryEntity: string | null }>`
    WITH gone AS (
      DELETE FROM memory_units u WHERE u.bank_id = ${bankId} AND ${where}
      RETURNING u.id, u.fact_type <> 'observation' AS counted, ${said} AS said),
    removed AS (
      SELECT ue.entity_id, count(*)::int AS mentions, min(g.said) AS first_said, max(g.said) AS last_said
      FROM gone g JOIN unit_entities ue ON ue.unit_id = g.id
      WHERE g.counted
      GROUP BY ue.entity_id),
    counted AS (
      UPDATE entities e SET mention_count = greatest(0, e.mention_count - r.mentions)
      FROM removed r
      WHERE e.bank_id = ${bankId} AND e.id = r.entity_id
      RETURNING e.id, (e.first_seen IS NULL OR r.first_said <= e.first_seen OR e.last_seen IS NULL OR r.last_said >= e.last_seen) AS boundary)
    SELECT g.id, NULL::text AS boundary_entity FROM gone g
    UNION ALL
    SELECT NULL::text, c.id FROM counted c WHERE c.boundary`
  yield* recountTimes(bankId, rows.flatMap((row) => row.boundaryEntity === null ? [] : [row.boundaryEntity]))
  return rows.flatMap((row) => row.id === null ? [] : [row.id])
})

/**
 * How many of the bank's facts a recount of a first (last) time walks, in time order from the entity's old time,
 * before it recounts every mention instead: an entity named in more than about one fact in this many is found
 * within it, and one named more rarely has few mentions to recount.
 */
const nearbyFacts = 256

/**
 * Recounts the first/last mention times of the given entities (an entity with no mention left keeps its times).
 * Every fact still naming an entity was said no earlier than its old first time (no later than its old last time),
 * so the new first time is the earliest fact naming it in a walk of the bank's facts in time order from the old one
 * (`memory_units_list_order`); only when none of the first `nearbyFacts` names it are all its mentions read. A sweep
 * deletes the oldest facts, so its every slice moves the first time of each entity the slice named: recounting
 * every mention of the bank's busiest entities made a slice's cost grow with the bank.
 */
const recountTimes = Effect.fn("EntityMentions.recountTimes")(
  function*(bankId: string, entityIds: ReadonlyArray<string>) {
    if (entityIds.length === 0) return
    const sql = yield* SqlClient.SqlClient
    const said = sql.literal(saidAt)
    const nearest = (direction: "first" | "last") => {
      const [bound, order] = direction === "first" ? [sql`>= e.first_seen`, sql`ASC`] : [sql`<= e.last_seen`, sql`DESC`]
      return sql`(SELECT w.said FROM (
          SELECT u.id, ${said} AS said FROM memory_units u
          WHERE u.bank_id = ${bankId} AND ${said} ${bound} AND u.fact_type <> 'observation'
          ORDER BY ${said} ${order} LIMIT ${nearbyFacts}) w
        WHERE EXISTS (SELECT 1 FROM unit_entities ue WHERE ue.unit_id = w.id AND ue.entity_id = e.id)
        ORDER BY w.said ${order} LIMIT 1)`
    }
    const all = (aggregate: "min" | "max", kept: "first_seen" | "last_seen") =>
      sql`(SELECT coalesce(${sql.literal(aggregate)}(${said}), e.${sql.literal(kept)})
        FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
        WHERE ue.entity_id = e.id AND u.fact_type <> 'observation')`
    // A subquery in a CASE branch runs only when the branch is taken: the full recount only when the walk found none.
    yield* sql`
    WITH near AS (
      SELECT e.id, ${nearest("first")} AS first_near, ${nearest("last")} AS last_near
      FROM entities e WHERE e.bank_id = ${bankId} AND e.id IN ${sql.in([...entityIds])})
    UPDATE entities e SET
      first_seen = CASE WHEN n.first_near IS NOT NULL THEN n.first_near ELSE ${all("min", "first_seen")} END,
      last_seen = CASE WHEN n.last_near IS NOT NULL THEN n.last_near ELSE ${all("max", "last_seen")} END
    FROM near n WHERE e.id = n.id`
  }
)
