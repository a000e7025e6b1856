/**
 * The Hindsight 0.9 fields: a bank's pipeline switches (recall strategies, reranking, automatic consolidation,
 * recall defaults, memory defense) as one jsonb column of overrides; when the bank was last written to, kept by
 * statement-level triggers so every path that stores facts or documents moves it without knowing about it; and a
 * mental model's `keep_trace` and `response_schema`.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE banks ADD COLUMN pipeline_settings jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`ALTER TABLE banks ADD COLUMN last_write_at timestamptz`
  yield* sql`
    UPDATE banks b SET last_write_at = w.last FROM (
      SELECT bank_id, max(last) AS last FROM (
        SELECT bank_id, max(created_at) AS last FROM memory_units GROUP BY bank_id
        UNION ALL
        SELECT bank_id, max(updated_at) FROM documents GROUP BY bank_id
      ) writes GROUP BY bank_id
    ) w
    WHERE w.bank_id = b.bank_id`
  // One UPDATE per statement, not per row: a retain of 1,000 facts touches the bank's row once.
  yield* sql`
    CREATE FUNCTION note_bank_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE banks SET last_write_at = now() WHERE bank_id IN (SELECT DISTINCT bank_id FROM written);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_units_written AFTER INSERT ON memory_units
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION note_bank_write()`
  yield* sql`
    CREATE TRIGGER documents_inserted AFTER INSERT ON documents
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION note_bank_write()`
  yield* sql`
    CREATE TRIGGER documents_updated AFTER UPDATE ON documents
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION note_bank_write()`
  yield* sql`ALTER TABLE mental_models ADD COLUMN keep_trace boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE mental_models ADD COLUMN response_schema jsonb`
})
