/**
 * Keeps the query planner's statistics current as memories grow. PostgreSQL's autovacuum does this on a
 * server, but embedded PGlite has no autovacuum: without it the planner believes the tables are tiny and
 * scans them instead of using the HNSW and link indexes. Analyzes after the tables grew by a fifth (at least
 * 500 rows) since the last time.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { SqlClient } from "effect/sql"

export class TableStatistics extends Context.Service<TableStatistics, {
  /** Records that `rows` memory units were written, analyzing the memory tables when they grew enough. */
  readonly noteWrites: (rows: number) => Effect.Effect<void>
}>()("engram/storage/TableStatistics") {
  static readonly layer = Layer.effect(
    TableStatistics,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const initial = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units`.pipe(Effect.orDie)
      const state = yield* Ref.make({ atLastAnalyze: initial[0]?.count ?? 0, since: 0 })
      const analyze = sql`ANALYZE memory_units, memory_links, unit_entities, entities`.pipe(
        Effect.catchCause((cause) => Effect.logWarning("ANALYZE failed; planner statistics may be stale", cause))
      )
      return TableStatistics.of({
        noteWrites: (rows) =>
          Effect.gen(function*() {
            const due = yield* Ref.modify(state, (current) => {
              const since = current.since + rows
              const threshold = Math.max(500, current.atLastAnalyze * 0.2)
              return since >= threshold
                ? [true, { atLastAnalyze: current.atLastAnalyze + since, since: 0 }] as const
                : [false, { ...current, since }] as const
            })
            if (due) yield* analyze
          })
      })
    })
  )
}
