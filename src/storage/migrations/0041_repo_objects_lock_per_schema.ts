/**
 * The repo object store's advisory lock is per schema (issue 36): `repo_collect_garbage()` (migrations 0023 and 0033)
 * took `pg_advisory_xact_lock(hashtext('engram.repo_objects'))`, one key for the whole database, so tenants in other
 * schemas of one PostgreSQL database queued behind each other's sweeps. It now takes the two-part key of
 * `src/repos/ObjectsLock.ts`, the constant and the schema's name, like the server's own statements. Same body
 * otherwise (the server's collector is the sliced one of `GarbageCollection.ts`; this function is kept for callers
 * of the SQL API).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION repo_collect_garbage() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      removed bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('engram.repo_objects'), hashtext(current_schema()));
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
