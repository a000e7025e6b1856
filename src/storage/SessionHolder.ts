/**
 * Marks the fibers that hold a database connection for a whole transaction, so that the service's scheduler runs the
 * slice a reply resumes ahead of the lanes (layers/runtime/TimeSlicedScheduler.ts).
 *
 * On the embedded tier there is one session. A transaction holds it from `BEGIN` to the release after `COMMIT`, and
 * between two of its statements its fiber has to be scheduled on the event loop: when each reply's continuation
 * waited in its bank's lane behind fifty clients' recall slices, a retain group's twelve to seventeen statements
 * (5–15 ms each) held the session for 300–1,400 ms, and every other statement of the service (the retains' bank
 * reads, audit rows, listeners, the brain's catch-ups) queued behind it (`docs/isolation.md`, "Mixed load: the
 * session's holder and the retain's own catch-up"). The mark covers the transaction from before its `BEGIN` to after
 * its connection is released, which the context of the statements inside it does not: the replies to `BEGIN` and to
 * `COMMIT` were each another wait in the lane.
 */
import { Context, Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** True inside `withTransaction` of a marked client, from before `BEGIN` until the connection is back. */
export const HoldsDatabaseSession = Context.Reference<boolean>("engram/storage/HoldsDatabaseSession", {
  defaultValue: () => false
})

/**
 * Makes every transaction of `client` mark its fiber (and the fibers it forks) as holding the session. Mutates the
 * client: every service reaches transactions through this one object's `withTransaction`.
 */
export const markSessionHolders = <C extends SqlClient.SqlClient>(client: C): C => {
  const withTransaction = client.withTransaction
  const marked: SqlClient.SqlClient["withTransaction"] = (effect) =>
    Effect.provideService(withTransaction(effect), HoldsDatabaseSession, true)
  ;(client as { withTransaction: SqlClient.SqlClient["withTransaction"] }).withTransaction = marked
  return client
}
