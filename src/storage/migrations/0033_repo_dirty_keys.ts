/**
 * Memory repos that cost what changed:
 * - `repo_dirty_keys`: every write to a versioned table of a repo's root bank leaves its (table, primary key) here,
 *   written by statement triggers the server installs from the catalog (`src/repos/DirtyLog.ts`, so a table a later
 *   migration adds is tracked too). Status, a workspace diff and a commit read only these keys; a commit empties it.
 *   `memory_repos.dirty_tracked` says the log is complete since HEAD (repos made before this migration are not
 *   until their next commit, checkout or reset; meanwhile they fall back to hashing the bank).
 * - Branches are pointers: `repo_branches.state_tables` is a parked branch's working tree as stored table manifests
 *   (its HEAD plus its uncommitted work); `replica_tables` is the state its hidden bank holds, when it has one (a
 *   read copy made on the first `branch_name` read and brought up to date by the difference on later reads).
 * - Garbage collection marks from branch states and replicas too, so a parked branch's uncommitted work survives,
 *   and waits while a first enable is under way (its objects are reachable from nothing until its commit).
 * - The first enable of a bank runs in bounded slices (`src/repos/SlicedEnable.ts`): `memory_repos.enable_progress`
 *   says how far it got (null once the initial commit exists), and `repo_enable_rows` holds the row hashes of the
 *   slices done so far, with their top bucket, until the tree is built from them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repo_dirty_keys (
      bank_id text NOT NULL,
      table_name text NOT NULL,
      k text NOT NULL,
      PRIMARY KEY (bank_id, table_name, k)
    )`
  yield* sql`ALTER TABLE memory_repos ADD COLUMN dirty_tracked boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE memory_repos ADD COLUMN enable_progress jsonb`
  yield* sql`
    CREATE TABLE repo_enable_rows (
      repo_id text NOT NULL REFERENCES memory_repos (repo_id) ON DELETE CASCADE,
      table_name text NOT NULL,
      k text NOT NULL,
      h text NOT NULL,
      b integer NOT NULL,
      b1 integer NOT NULL,
      PRIMARY KEY (repo_id, table_name, k)
    )`
  yield* sql`CREATE INDEX repo_enable_rows_bucket ON repo_enable_rows (repo_id, table_name, b)`
  yield* sql`ALTER TABLE repo_branches ADD COLUMN state_tables jsonb`
  yield* sql`ALTER TABLE repo_branches ADD COLUMN replica_tables jsonb`
  yield* sql`ALTER TABLE repo_branches ADD COLUMN state_rows jsonb`

  yield* sql.unsafe(`
    CREATE FUNCTION repo_forget_dirty_keys() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM repo_dirty_keys WHERE bank_id = OLD.root_bank_id;
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER memory_repos_forget_dirty_keys AFTER DELETE ON memory_repos FOR EACH ROW EXECUTE FUNCTION repo_forget_dirty_keys()`

  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION repo_collect_garbage() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      removed bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('engram.repo_objects'));
      IF EXISTS (SELECT 1 FROM memory_repos WHERE enable_progress IS NOT NULL) THEN
        RETURN 0;
      END IF;
      WITH RECURSIVE live(hash) AS (
        SELECT e.value FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e
        UNION
        SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.state_tables, '{}'::jsonb)) e
        UNION
        SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.replica_tables, '{}'::jsonb)) e
        UNION
        SELECT e.value FROM live JOIN repo_objects o ON o.hash = live.hash AND o.kind <> 'row'
        CROSS JOIN LATERAL jsonb_each_text(o.body) e
      )
      DELETE FROM repo_objects o WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.hash = o.hash);
      GET DIAGNOSTICS removed = ROW_COUNT;
      RETURN removed;
    END $$`)
})
