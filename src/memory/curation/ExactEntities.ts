/**
 * A curated fact's entities, set by hand: names are taken literally (an existing entity is reused only when its
 * name matches case-insensitively, otherwise one is created), unlike retain's resolver, which folds a name into a
 * similar existing entity. Replaces the fact's entity set and keeps every touched entity's mention count exact.
 * Run inside the caller's transaction.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { linkMentions, recountMentions } from "../retain/EntityMentions.ts"

export const setEntitiesExactly = Effect.fn("ExactEntities.set")(function*(
  bankId: string,
  unitId: string,
  names: ReadonlyArray<string>
) {
  const sql = yield* SqlClient.SqlClient
  const before = yield* sql<
    { entityId: string }
  >`DELETE FROM unit_entities WHERE unit_id = ${unitId} RETURNING entity_id`
  yield* sql`DELETE FROM memory_links WHERE bank_id = ${bankId} AND link_type = 'entity'
    AND (from_id = ${unitId} OR to_id = ${unitId})`
  const wanted = [...new Map(names.map((name) => [name.trim().toLowerCase(), name.trim()])).values()]
    .filter((name) => name !== "")
  const ids: Array<string> = []
  for (const name of wanted) {
    const found = yield* sql<{ id: string }>`SELECT id FROM entities
      WHERE bank_id = ${bankId} AND lower(canonical_name) = lower(${name}) LIMIT 1`
    const id = found[0]?.id ?? crypto.randomUUID()
    if (found.length === 0) {
      yield* sql`INSERT INTO entities (id, bank_id, canonical_name, mention_count) VALUES (${id}, ${bankId}, ${name}, 0)`
    }
    ids.push(id)
  }
  yield* linkMentions(ids.map((entityId) => ({ unitId, entityId })))
  const touched = [...new Set([...before.map((row) => row.entityId), ...ids])]
  yield* recountMentions(bankId, touched)
  // An entity this fact alone named goes with the name, as when a memory is deleted.
  const dropped = before.map((row) => row.entityId).filter((id) => !ids.includes(id))
  if (dropped.length > 0) {
    yield* sql`DELETE FROM entities e WHERE e.bank_id = ${bankId} AND e.id IN ${sql.in(dropped)}
      AND NOT EXISTS (SELECT 1 FROM unit_entities ue WHERE ue.entity_id = e.id)`
  }
})
