/**
 * A log of memory units removed or rewritten, per bank, so each bank's in-memory brain (graph snapshot and
 * keyword index) can apply a write as a delta instead of rebuilding: new units it finds by `seq`, and this log
 * tells it which ones went away (including cascades and side effects no caller reports) or changed their text,
 * type or tags. A trigger writes it, so no write path can forget to. The brain deletes the entries it has read.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE memory_unit_changes (
      change_seq bigserial PRIMARY KEY,
      -- No foreign key: deleting a bank cascades to its units, whose trigger writes here after the bank row is
      -- gone. Deleting a bank deletes its entries itself (BankStore.remove).
      bank_id text NOT NULL,
      unit_id text NOT NULL
    )`
  yield* sql`CREATE INDEX memory_unit_changes_bank ON memory_unit_changes (bank_id, change_seq)`
  yield* sql`
    CREATE FUNCTION note_memory_unit_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO memory_unit_changes (bank_id, unit_id) VALUES (OLD.bank_id, OLD.id);
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_unit_changes AFTER DELETE OR UPDATE OF text, search_text, fact_type, tags
    ON memory_units FOR EACH ROW EXECUTE FUNCTION note_memory_unit_change()`
})
