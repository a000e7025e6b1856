/**
 * Indexes that keep retain's link building proportional to the batch, not to the bank: temporal neighbours are
 * read backwards along (time, seq); entity neighbours along each entity's units in retain order.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX IF EXISTS memory_units_time`
  yield* sql`CREATE INDEX memory_units_said ON memory_units (bank_id, (coalesce(mentioned_at, occurred_start)), seq)`
  yield* sql`ALTER TABLE unit_entities ADD COLUMN unit_seq bigint`
  yield* sql`UPDATE unit_entities ue SET unit_seq = u.seq FROM memory_units u WHERE u.id = ue.unit_id`
  yield* sql`CREATE INDEX unit_entities_entity_seq ON unit_entities (entity_id, unit_seq DESC)`
})
