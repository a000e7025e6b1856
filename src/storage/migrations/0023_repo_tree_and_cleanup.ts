/**
 * Memory repos, second step:
 * - `node` objects: a table manifest now names 256 top buckets, each a node naming up to 256 leaf buckets, so a
 *   one-row change stores one small node and one small leaf however big the table is (the one-level layout
 *   stored a whole 1/256 of the table's keys per changed row). One-level commits made before stay readable.
 * - `repo_map_json`: renames ids inside JSON documents (e.g. the memory ids a mental model's reflect response
 *   cites) through `repo_id_maps`, as the plain id columns are renamed when rows move into a workspace or fork.
 * - Deleting a repo's root bank deletes its hidden branch workspaces, and deleting any repo collects the objects
 *   no remaining commit reaches (`repo_collect_garbage()`; `Snapshots.collectGarbage` runs it on demand).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE repo_objects DROP CONSTRAINT IF EXISTS repo_objects_kind_check`
  yield* sql`ALTER TABLE repo_objects ADD CONSTRAINT repo_objects_kind_check CHECK (kind IN ('row', 'bucket', 'node', 'table'))`

  // Whole JSON strings equal to a mapped id are replaced; nothing else in the document changes.
  yield* sql.unsafe(`
    CREATE FUNCTION repo_map_json(doc jsonb, ws text, to_local boolean) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
    DECLARE
      body text;
      pair record;
    BEGIN
      IF doc IS NULL OR jsonb_typeof(doc) NOT IN ('object', 'array', 'string') OR doc = '{}'::jsonb OR doc = '[]'::jsonb THEN
        RETURN doc;
      END IF;
      body := doc::text;
      FOR pair IN
        SELECT CASE WHEN to_local THEN m.canonical_id ELSE m.local_id END AS src,
               CASE WHEN to_local THEN m.local_id ELSE m.canonical_id END AS dst
        FROM repo_id_maps m
        WHERE m.workspace_bank_id = ws
          AND (CASE WHEN to_local THEN m.canonical_id ELSE m.local_id END)
            IN (SELECT (regexp_matches(body, '"([^"\\\\]+)"', 'g'))[1])
      LOOP
        body := replace(body, '"' || pair.src || '"', '"' || pair.dst || '"');
      END LOOP;
      RETURN body::jsonb;
    END $$`)

  // Marks from every commit's table manifests down through nodes and buckets; sweeps the rest. The exclusive
  // advisory lock waits for transactions that are storing objects (they hold it shared).
  yield* sql.unsafe(`
    CREATE FUNCTION repo_collect_garbage() RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      removed bigint;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('engram.repo_objects'));
      WITH RECURSIVE live(hash) AS (
        SELECT e.value FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e
        UNION
        SELECT e.value FROM live JOIN repo_objects o ON o.hash = live.hash AND o.kind <> 'row'
        CROSS JOIN LATERAL jsonb_each_text(o.body) e
      )
      DELETE FROM repo_objects o WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.hash = o.hash);
      GET DIAGNOSTICS removed = ROW_COUNT;
      RETURN removed;
    END $$`)

  yield* sql.unsafe(`
    CREATE FUNCTION repo_drop_workspaces() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      hidden text[];
    BEGIN
      SELECT coalesce(array_agg(b.workspace_bank_id), '{}') INTO hidden
      FROM memory_repos r JOIN repo_branches b ON b.repo_id = r.repo_id
      WHERE r.root_bank_id = OLD.bank_id AND b.workspace_bank_id <> OLD.bank_id;
      IF cardinality(hidden) > 0 THEN
        DELETE FROM banks WHERE bank_id = ANY (hidden);
        DELETE FROM memory_unit_changes WHERE bank_id = ANY (hidden);
        DELETE FROM repo_id_maps WHERE workspace_bank_id = ANY (hidden);
      END IF;
      RETURN OLD;
    END $$`)
  yield* sql`CREATE TRIGGER banks_drop_repo_workspaces BEFORE DELETE ON banks FOR EACH ROW EXECUTE FUNCTION repo_drop_workspaces()`

  yield* sql.unsafe(`
    CREATE FUNCTION repo_deleted_collect() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM repo_collect_garbage();
      RETURN NULL;
    END $$`)
  yield* sql`CREATE TRIGGER memory_repos_collect_garbage AFTER DELETE ON memory_repos FOR EACH ROW EXECUTE FUNCTION repo_deleted_collect()`
})
