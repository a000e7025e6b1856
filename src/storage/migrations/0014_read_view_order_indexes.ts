/**
 * Indexes in the exact order of the three newest-first read views, so a page of them is read from the index's
 * end instead of sorting every memory of the bank (100k rows for a 1,000-node graph). The expressions must stay
 * identical to the ORDER BY of GraphView.graph, GraphView.timeline and MemoryUnits.list (a B-tree scanned
 * backwards serves DESC, DESC).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX memory_units_graph_order
    ON memory_units (bank_id, (coalesce(mentioned_at, occurred_start, created_at)), seq)`
  yield* sql`CREATE INDEX memory_units_timeline_order
    ON memory_units (bank_id, (coalesce(occurred_start, mentioned_at)), seq)`
  yield* sql`CREATE INDEX memory_units_list_order ON memory_units (bank_id, (coalesce(mentioned_at, created_at)), seq)`
})
