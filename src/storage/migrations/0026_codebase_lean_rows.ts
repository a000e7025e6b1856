/**
 * A codebase import writes tens of thousands of rows in one transaction, and on embedded PGlite the write was
 * more than half of the import. Three things it stored were copies:
 * - Every symbol is also a chunk (one chunk per symbol), so `codebase_symbols` repeated the chunk's path, lines,
 *   names and kind, with its own key and two indexes. A symbol is now its chunk: the two facts only a symbol has
 *   (exported, its own PageRank) become chunk columns, set on symbol chunks and NULL on region chunks.
 * - `preview_text` is the head of `content_text` with the whitespace collapsed; reads derive it.
 * - `significance_components` held the score and the reason the row keeps in columns of their own, under key
 *   names repeated in every row. It is now the component values in a fixed order (`Significance.ts`, `packComponents`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE codebase_chunks ADD COLUMN symbol_exported boolean, ADD COLUMN symbol_pagerank real`
  yield* sql`
    UPDATE codebase_chunks c SET symbol_exported = s.exported, symbol_pagerank = s.pagerank
    FROM codebase_symbols s
    WHERE s.snapshot_id = c.snapshot_id AND s.path = c.path AND s.fq_name = c.parent_fq_name
      AND s.start_line = c.start_line AND s.kind = c.kind`
  yield* sql`DROP TABLE codebase_symbols`
  yield* sql`ALTER TABLE codebase_chunks DROP COLUMN preview_text`
  yield* sql`
    UPDATE codebase_chunks SET significance_components = json_build_array(
      significance_components->'role_weight', significance_components->'symbol_kind_weight',
      significance_components->'exportness', significance_components->'pagerank_centrality',
      significance_components->'fanin', significance_components->'complexity_density',
      significance_components->'safety_priority', significance_components->'cluster_representativeness',
      significance_components->'change_boost', significance_components->'parse_confidence',
      significance_components->'route_hint')
    WHERE json_typeof(significance_components) = 'object'`
})
