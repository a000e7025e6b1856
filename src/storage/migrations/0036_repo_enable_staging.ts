/**
 * The first enable's staging table (`repo_enable_rows`, migration 0033) without its primary key and its foreign
 * key: a slice writes each staged row once, in the transaction that records its progress, so the key never caught
 * a duplicate, while checking it (a collated text index on the row key) and the foreign key's per-row trigger were
 * about half of a slice's insert (`docs/memory-repos.md`, issue 36). Rows are found by the bucket index the tree
 * phase reads; a deleted repo's staged rows go with the repo's dirty keys, in the trigger that already runs then.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE repo_enable_rows DROP CONSTRAINT IF EXISTS repo_enable_rows_pkey`
  yield* sql`ALTER TABLE repo_enable_rows DROP CONSTRAINT IF EXISTS repo_enable_rows_repo_id_fkey`
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION repo_forget_dirty_keys() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM repo_dirty_keys WHERE bank_id = OLD.root_bank_id;
      DELETE FROM repo_enable_rows WHERE repo_id = OLD.repo_id;
      RETURN NULL;
    END $$`)
})
