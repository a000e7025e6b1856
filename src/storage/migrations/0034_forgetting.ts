/**
 * Forgetting: a memory may carry the moment it expires (`expires_at`; every read hides it from then on and the expiry
 * sweep deletes it with its derived state), and a bank its retention policy. The change log's trigger learns the new
 * column, so a memory whose expiry is set or cleared reaches every bank brain that holds it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memory_units ADD COLUMN expires_at timestamptz`
  // The sweep and its scheduler read only expiring memories, by due time: the index holds nothing else.
  yield* sql`CREATE INDEX memory_units_expiring ON memory_units (expires_at, bank_id) WHERE expires_at IS NOT NULL`
  yield* sql`ALTER TABLE banks ADD COLUMN retention_settings jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`DROP TRIGGER memory_unit_changes ON memory_units`
  yield* sql`
    CREATE TRIGGER memory_unit_changes AFTER DELETE OR UPDATE OF text, search_text, fact_type, tags, context,
      occurred_start, occurred_end, mentioned_at, document_id, chunk_id, metadata, source_fact_ids, confidence,
      superseded_by, embedding, embedding_model, expires_at
    ON memory_units FOR EACH ROW EXECUTE FUNCTION note_memory_unit_change()`
})
