/**
 * A codebase snapshot's import and call edges move into the file they start from (`codebase_files.edges`, a list
 * of positional arrays; see `snapshot/StoredEdges.ts`): a row per edge cost the import's one-transaction write as
 * much as a chunk row did, and every read of edges took either all of a snapshot's edges (impact) or those of one
 * file. Snapshots already stored keep their edges; labels a reader can derive are left out as the writer does.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE codebase_files ADD COLUMN edges json`
  yield* sql`
    UPDATE codebase_files f SET edges = grouped.edges
    FROM (
      SELECT snapshot_id, from_path, json_agg(json_build_array(edge_type, to_path, from_symbol, to_symbol, target_ref,
        CASE WHEN label = (CASE WHEN edge_type = 'calls' THEN from_symbol || ' -> ' || to_symbol ELSE target_ref END)
          THEN NULL ELSE label END) ORDER BY ctid) AS edges
      FROM codebase_edges GROUP BY snapshot_id, from_path
    ) grouped
    WHERE f.snapshot_id = grouped.snapshot_id AND f.path = grouped.from_path`
  yield* sql`DROP TABLE codebase_edges`
})
