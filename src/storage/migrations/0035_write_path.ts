/**
 * A cheaper write path for retain (docs/write-path.md has the measurements). A memory has about 27 links, and each
 * link row ran three foreign-key checks (its bank, both ends): per-row trigger work that was a third of a link's
 * insert cost. Every path that writes links selects both ends from `memory_units` in the same statement, so the
 * checks only ever served their ON DELETE CASCADE; one statement-level trigger now removes the links of deleted
 * memories in a single set-based delete (the bank's deletion reaches them through its memories). Two indexes on
 * `unit_entities` duplicated the leading columns of others (its primary key; the entity-then-seq index) and go.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memory_links DROP CONSTRAINT IF EXISTS memory_links_bank_id_fkey`
  yield* sql`ALTER TABLE memory_links DROP CONSTRAINT IF EXISTS memory_links_from_id_fkey`
  yield* sql`ALTER TABLE memory_links DROP CONSTRAINT IF EXISTS memory_links_to_id_fkey`
  yield* sql`
    CREATE FUNCTION drop_links_of_deleted_units() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM memory_links l USING gone g WHERE l.from_id = g.id;
      DELETE FROM memory_links l USING gone g WHERE l.to_id = g.id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER memory_units_drop_links AFTER DELETE ON memory_units
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION drop_links_of_deleted_units()`
  yield* sql`DROP INDEX IF EXISTS unit_entities_unit`
  yield* sql`DROP INDEX IF EXISTS unit_entities_entity`
})
