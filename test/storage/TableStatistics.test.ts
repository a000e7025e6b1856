/**
 * The memory tables' maintenance on embedded PGlite, which has no autovacuum: statistics and visibility maps appear
 * at start when a process died before its maintenance ran, after growth, and only once requests pause. Runs in the
 * PGlite tier (a PostgreSQL server's autovacuum may analyze on its own, so "not yet" could not be asserted there).
 */
import { NodeServices } from "@effect/platform-node"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlLive from "../../layers/storage/SqlLive.ts"
import { Foreground } from "../../src/bank/Foreground.ts"
import { migrations } from "../../src/storage/migrations/index.ts"
import { TableStatistics } from "../../src/storage/TableStatistics.ts"

const database = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations), table: "engram_migrations" }).pipe(
  Layer.provide(NodeServices.layer),
  Layer.provideMerge(SqlLive.pglite())
)

/** Memory units written straight into the table, as a bulk import (or a killed process) leaves them. */
const insertUnits = (bankId: string, count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO banks (bank_id) VALUES (${bankId}) ON CONFLICT DO NOTHING`
    yield* sql`
      INSERT INTO memory_units (id, bank_id, text, fact_type, content_hash)
      SELECT ${bankId} || '-' || n, ${bankId}, 'fact number ' || n, 'world', md5(${bankId} || n)
      FROM generate_series(1, ${count}) AS n`
  })

const maintenanceFacts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ analyzed: boolean; allVisible: number; estimate: number }>`
    SELECT EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'memory_units') AS analyzed,
      relallvisible AS all_visible, reltuples::float8 AS estimate
    FROM pg_class WHERE oid = 'memory_units'::regclass`
  return row!
})

/** Polls until the maintenance has run (it runs on a background fiber). */
const maintained = (minimumEstimate: number) =>
  maintenanceFacts.pipe(
    Effect.filterOrFail((facts) => facts.analyzed && facts.allVisible > 0 && facts.estimate >= minimumEstimate),
    Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 400 })
  )

const statisticsLayer = TableStatistics.layer.pipe(Layer.provideMerge(Foreground.layerWith("1 second")))

const tier = process.env["ENGRAM_TEST_DATABASE"]

describe.skipIf(tier !== undefined && tier !== "pglite")("TableStatistics on PGlite", () => {
  it.live("vacuums and analyzes at start when a bank's memories have no statistics", () =>
    Effect.gen(function*() {
      yield* insertUnits("imported", 800)
      const before = yield* maintenanceFacts
      assert.isFalse(before.analyzed)
      assert.strictEqual(before.allVisible, 0)
      yield* Layer.build(statisticsLayer)
      const after = yield* maintained(800)
      assert.strictEqual(after.estimate, 800)
    }).pipe(Effect.scoped, Effect.provide(database)), { timeout: 60_000 })

  it.live("maintains the tables after they grew by a fifth, once no request is in flight", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(statisticsLayer)
      const statistics = Context.get(context, TableStatistics)
      const foreground = Context.get(context, Foreground)
      yield* insertUnits("growing", 700)
      // A request in flight: the maintenance, now due, waits for it.
      const release = yield* Deferred.make<void>()
      const request = yield* foreground.request(Deferred.await(release)).pipe(Effect.forkChild)
      yield* Effect.yieldNow
      yield* statistics.noteWrites(700)
      yield* Effect.sleep(Duration.millis(300))
      assert.isFalse((yield* maintenanceFacts).analyzed, "maintenance ran while a request was in flight")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(request)
      const after = yield* maintained(700)
      assert.strictEqual(after.estimate, 700)
    }).pipe(Effect.scoped, Effect.provide(database)), { timeout: 60_000 })

  it.live("does nothing below the threshold", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(statisticsLayer)
      const statistics = Context.get(context, TableStatistics)
      yield* insertUnits("small", 100)
      yield* statistics.noteWrites(100)
      yield* Effect.sleep(Duration.millis(300))
      assert.isFalse((yield* maintenanceFacts).analyzed)
    }).pipe(Effect.scoped, Effect.provide(database)), { timeout: 60_000 })
})
