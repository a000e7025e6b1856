/**
 * An index for recall's temporal strategy, which looks for memories whose time span overlaps a window. Two
 * B-trees (on where spans start and where they end) cannot answer an overlap in the middle of a long bank:
 * each bound alone matches half of it. A GiST index over the span as a range answers `&&` directly. The span
 * is written with least/greatest so a memory whose end precedes its start cannot break an insert.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX memory_units_span ON memory_units USING gist (tstzrange(
    least(coalesce(occurred_start, mentioned_at), coalesce(occurred_end, occurred_start, mentioned_at)),
    greatest(coalesce(occurred_start, mentioned_at), coalesce(occurred_end, occurred_start, mentioned_at)),
    '[]'))`
})
