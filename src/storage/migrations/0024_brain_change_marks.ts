/**
 * What lets a cluster prune the memory change log (`memory_unit_changes`). Several nodes may each hold a brain of
 * a bank and catch up from the log at their own pace, so no one may delete entries another has not applied yet.
 * `brain_change_marks` holds, per node and bank, the last entry that node's brain applied, with an expiry the node
 * renews while it holds the brain: the log is pruned below the lowest live mark, so a dead node holds it back only
 * until its marks expire. `memory_change_horizons` records, in the pruning transaction, how far a bank's log was
 * pruned: a brain whose mark lies below it (its node's mark had expired) rebuilds instead of missing entries.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE brain_change_marks (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      node_id text NOT NULL,
      change_mark bigint NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (bank_id, node_id)
    )`
  yield* sql`CREATE INDEX brain_change_marks_node ON brain_change_marks (node_id)`
  yield* sql`
    CREATE TABLE memory_change_horizons (
      bank_id text PRIMARY KEY REFERENCES banks (bank_id) ON DELETE CASCADE,
      pruned_below bigint NOT NULL
    )`
})
