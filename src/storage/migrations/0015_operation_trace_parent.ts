/**
 * Background work remembers the request that queued it: the W3C `traceparent` of the request's span (null when
 * trace export is off), so the operation's own trace links back to it even when it runs after a restart.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE operations ADD COLUMN trace_parent text`
})
