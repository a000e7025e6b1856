/**
 * Pruning of the memory change log when several nodes share the database (a cluster). Each node's brain records
 * the last entry it applied as its mark (table `brain_change_marks`, migration 0024), renewed while the node holds
 * the brain; a bank's log is pruned below its lowest live mark, and how far it was pruned (its horizon) is written
 * in the same transaction. Correctness never rests on a mark being live: a brain whose mark lies below the horizon
 * (its node stalled past the expiry, or the database was away) sees it when it next catches up and rebuilds.
 */
import { Duration, Effect } from "effect"
import type { SqlClient } from "effect/sql"

export interface SharedChangeLog {
  /** This node, unique among those sharing the database (a fresh id per process). */
  readonly nodeId: string
  /** How long a mark holds the log back after its node last renewed it. Default 2 minutes. */
  readonly markTimeToLive?: Duration.Input
  /** How often the node renews the marks of the brains it holds. Default 30 seconds. */
  readonly renewEvery?: Duration.Input
}

export const makeChangeLogMarks = (sql: SqlClient.SqlClient, shared: SharedChangeLog) => {
  const timeToLive = `${Duration.toMillis(shared.markTimeToLive ?? Duration.minutes(2))} milliseconds`
  const node = shared.nodeId

  /**
   * Records this node's mark for the bank, then prunes the bank's log below the lowest live mark (this one among
   * them) and moves the horizon there, in one transaction: a reader's snapshot sees both the deletion and the
   * horizon, or neither. The entry at the lowest mark stays (a `.brain` file's data version names the last one).
   */
  const record = (bankId: string, mark: number) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO brain_change_marks (bank_id, node_id, change_mark, expires_at)
        VALUES (${bankId}, ${node}, ${mark}, now() + ${timeToLive}::interval)
        ON CONFLICT (bank_id, node_id) DO UPDATE SET change_mark = excluded.change_mark, expires_at = excluded.expires_at`
      const floor = yield* sql<{ floor: number | null }>`
        SELECT min(change_mark)::float8 AS floor FROM brain_change_marks WHERE bank_id = ${bankId} AND expires_at > now()`
      const below = floor[0]?.floor ?? null
      if (below === null || below <= 0) return
      const pruned = yield* sql`DELETE FROM memory_unit_changes WHERE bank_id = ${bankId} AND change_seq < ${below}
        RETURNING change_seq`
      if (pruned.length === 0) return
      yield* sql`
        INSERT INTO memory_change_horizons (bank_id, pruned_below) VALUES (${bankId}, ${below})
        ON CONFLICT (bank_id) DO UPDATE SET pruned_below = greatest(memory_change_horizons.pruned_below, excluded.pruned_below)`
    }).pipe(sql.withTransaction)

  /**
   * Renews the marks of the brains this node holds and drops every expired mark, so the table does not grow with
   * nodes that came and went. The marks of brains this node released are not deleted here but left to expire:
   * `held` is read before these statements run, and a brain loaded meanwhile records its mark in between — deleting
   * "this node's marks not held" would delete that fresh mark, and other nodes would prune the log past it.
   */
  const renew = (held: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* sql`UPDATE brain_change_marks SET expires_at = now() + ${timeToLive}::interval
        WHERE node_id = ${node} AND bank_id = ANY (${[...held]}::text[])`
      yield* sql`DELETE FROM brain_change_marks WHERE expires_at <= now()`
    }).pipe(sql.withTransaction)

  return { record, renew, renewEvery: Duration.fromInputUnsafe(shared.renewEvery ?? Duration.seconds(30)) }
}
