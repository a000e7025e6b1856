/**
 * Keeps the query planner's statistics and the memory tables' visibility maps current as memories grow.
 * PostgreSQL's autovacuum does this on a server, but embedded PGlite has none: without statistics the planner
 * believes a bank is a few hundred rows and scans 100k memories where an index finds 50 (recall measured 3.5 s
 * instead of 60 ms), and without a vacuum no page is marked all-visible, so counts cannot be answered from an index
 * (the graph view's total: 110 ms instead of 26 at 100k). So this runs `VACUUM (ANALYZE)` where no autovacuum
 * launcher is running and `ANALYZE` where one is, after the tables grew by a fifth (at least 500 rows) since the last
 * time (by the retain that crossed the line, as autovacuum would soon after), and once at start when the statistics
 * are missing or a fifth off (a process killed before its maintenance ran). Both run inline, not on a background
 * fiber: PGlite answers on the event loop's microtasks, so a fiber forked beside a loop of retains did not run until
 * the loop ended, and 10k retains ran on a planner with no statistics (anomaly detection's link reads scanned every
 * link: retain 3x slower). At 100k memories a maintenance takes about 1.5 s, once per fifth of growth.
 *
 * Where an autovacuum launcher runs (a PostgreSQL server), the inline `ANALYZE` is only a guard for growth faster
 * than autovacuum's naptime (a minute by default), not the cadence: autovacuum analyzes each table after a tenth of
 * growth anyway, so the inline one runs when the tables doubled since the last (at least 500 rows). An `ANALYZE`
 * reads a bounded sample (300 x the statistics target rows; `memory_links` is past it at about 1,700 memories), so
 * its cost per retained item was about 5 x cost(N) / N at a fifth of growth and is cost(N) / N at a doubling: at
 * 5,000 memories the four tables took 290 ms of database CPU per maintenance, 0.29 ms per item at a fifth against
 * 0.06 at a doubling (docs/write-path.md). PGlite keeps a fifth: nothing else vacuums it, and index-only counts need
 * its visibility maps current.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { SqlClient } from "effect/sql"

const tables = "memory_units, memory_links, unit_entities, entities"

export class TableStatistics extends Context.Service<TableStatistics, {
  /** Records that `rows` memory units were written, maintaining the memory tables when they grew enough. */
  readonly noteWrites: (rows: number) => Effect.Effect<void>
  /** Runs the maintenance now and waits for it (seeded benchmark banks). */
  readonly maintain: Effect.Effect<void>
}>()("engram/storage/TableStatistics") {
  static readonly layer = Layer.effect(
    TableStatistics,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [facts] = yield* sql<{ count: number; estimate: number; analyzed: boolean; autovacuum: boolean }>`
        SELECT (SELECT count(*)::int FROM memory_units) AS count,
          (SELECT reltuples::float8 FROM pg_class WHERE oid = 'memory_units'::regclass) AS estimate,
          EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'memory_units') AS analyzed,
          EXISTS (SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher') AS autovacuum`.pipe(
        Effect.orDie
      )
      const count = facts?.count ?? 0
      // What the tables grow by between two maintenances, as a share of the memories at the last one.
      const growth = facts?.autovacuum ? 1 : 0.2
      const state = yield* Ref.make({ atLastMaintenance: count, since: 0, running: false })
      // VACUUM cannot run in a transaction block; it is its own statement here, never inside one.
      const statement = facts?.autovacuum ? sql.unsafe(`ANALYZE ${tables}`) : sql.unsafe(`VACUUM (ANALYZE) ${tables}`)
      const maintain = statement.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) =>
          Effect.logWarning("Table maintenance failed; planner statistics may be stale", cause)
        ),
        Effect.withSpan("TableStatistics.maintain")
      )
      // One maintenance at a time: a retain that crosses the line while another runs leaves it to that one.
      const maintainOnce = Effect.gen(function*() {
        const start = yield* Ref.modify(
          state,
          (current) => current.running ? [false, current] as const : [true, { ...current, running: true }] as const
        )
        if (!start) return
        yield* maintain.pipe(Effect.ensuring(Ref.update(state, (current) => ({ ...current, running: false }))))
      })

      const stale = count >= 500 &&
        (!facts?.analyzed || Math.abs(count - (facts?.estimate ?? -1)) > Math.max(500, count * 0.2))
      if (stale) {
        yield* Effect.logInfo(`Planner statistics of ${count} memories are missing or stale: maintaining the tables`)
        yield* maintainOnce
      }

      return TableStatistics.of({
        noteWrites: (rows) =>
          Effect.gen(function*() {
            const due = yield* Ref.modify(state, (current) => {
              const since = current.since + rows
              const threshold = Math.max(500, current.atLastMaintenance * growth)
              return since >= threshold
                ? [true, { ...current, atLastMaintenance: current.atLastMaintenance + since, since: 0 }] as const
                : [false, { ...current, since }] as const
            })
            if (due) yield* maintainOnce
          }),
        maintain
      })
    })
  )
}
