/**
 * The memory tables' maintenance on embedded PGlite, which has no autovacuum: statistics and visibility maps appear
 * at start when a process died before its maintenance ran, and after growth by a fifth — not before. Runs in the
 * PGlite tier (a PostgreSQL server's autovacuum may analyze on its own, so "not yet" could not be asserted there).
 * On PostgreSQL, where autovacuum keeps the statistics' cadence, the inline ANALYZE is a guard that runs when the
 * tables doubled: that tier counts the ANALYZE statements the service sends, not the statistics.
 */
import { NodeServices } from "@effect/platform-node"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient, Statement } from "effect/sql"
import * as SqlLive from "../../layers/storage/SqlLive.ts"
import { migrations } from "../../src/storage/migrations/index.ts"
import { TableStatistics } from "../../src/storage/TableStatistics.ts"
import { freshPgliteDataDir } from "../support/PgliteCopy.ts"
import { freshSchemaName } from "../support/TestRun.ts"

/**
 * A new database for each test: a copy of the run's migrated PGlite template (`freshPgliteDataDir`), where the
 * migrator finds every migration applied, instead of an in-memory PGlite that runs initdb and every migration
 * (about 6 s a test); without a template, a new data directory migrated here.
 */
const database = Layer.unwrap(Effect.sync(() => {
  const dataDir = freshPgliteDataDir()
  return PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations), table: "engram_migrations" }).pipe(
    Layer.provide(NodeServices.layer),
    Layer.provideMerge(SqlLive.pglite({ dataDir }))
  )
}))

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

const statisticsLayer = TableStatistics.layer

const tier = process.env["ENGRAM_TEST_DATABASE"]

describe.skipIf(tier !== undefined && tier !== "pglite")("TableStatistics on PGlite", () => {
  it.live("vacuums and analyzes at start when a bank's memories have no statistics", () =>
    Effect.gen(function*() {
      yield* insertUnits("imported", 800)
      const before = yield* maintenanceFacts
      assert.isFalse(before.analyzed)
      assert.strictEqual(before.allVisible, 0)
      yield* Layer.build(statisticsLayer)
      const after = yield* maintenanceFacts
      assert.isTrue(after.analyzed)
      assert.isAbove(after.allVisible, 0)
      assert.strictEqual(after.estimate, 800)
    }).pipe(Effect.scoped, Effect.provide(database)), { timeout: 60_000 })

  it.live(
    "maintains the tables once they grew by a fifth, within the write that crossed the line",
    () =>
      Effect.gen(function*() {
        const context = yield* Layer.build(statisticsLayer)
        const statistics = Context.get(context, TableStatistics)
        yield* insertUnits("growing", 400)
        yield* statistics.noteWrites(400)
        assert.isFalse((yield* maintenanceFacts).analyzed)
        yield* insertUnits("growing-more", 300)
        yield* statistics.noteWrites(300)
        const after = yield* maintenanceFacts
        assert.isTrue(after.analyzed)
        assert.isAbove(after.allVisible, 0)
        assert.strictEqual(after.estimate, 700)
      }).pipe(Effect.scoped, Effect.provide(database)),
    { timeout: 60_000 }
  )

  it.live("does nothing below the threshold", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(statisticsLayer)
      const statistics = Context.get(context, TableStatistics)
      yield* insertUnits("small", 100)
      yield* statistics.noteWrites(100)
      assert.isFalse((yield* maintenanceFacts).analyzed)
    }).pipe(Effect.scoped, Effect.provide(database)), { timeout: 60_000 })
})

/** A migrated schema of its own on the PostgreSQL tier, dropped with the layer. */
const postgresDatabase = (url: string) => {
  const schema = freshSchemaName()
  const dropSchema = Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => sql`DROP SCHEMA ${sql(schema)} CASCADE`.withoutTransform.pipe(Effect.orDie))
  }))
  // Named with the schema: unqualified, the migrator would find another engram's table in `public` (layers/Database.ts).
  return PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations), table: `${schema}.engram_migrations` }).pipe(
    Layer.provide(NodeServices.layer),
    Layer.provideMerge(dropSchema),
    Layer.provideMerge(SqlLive.postgres({ url: Redacted.make(url), schema }))
  )
}

/** The ANALYZE statements sent, counted as they are compiled. */
const analyses: Array<string> = []
const countAnalyses = Layer.succeed(Statement.CurrentTransformer, (statement) => {
  const [text] = statement.compile()
  if (/^\s*(VACUUM \(ANALYZE\)|ANALYZE)\b/.test(text)) analyses.push(text)
  return Effect.succeed(statement)
})

describe.skipIf(tier === undefined || tier === "pglite")("TableStatistics on PostgreSQL", () => {
  it.live(
    "analyzes inline when the tables doubled, not after each fifth: autovacuum keeps that cadence",
    () =>
      Effect.gen(function*() {
        analyses.length = 0
        const context = yield* Layer.build(statisticsLayer)
        const statistics = Context.get(context, TableStatistics)
        yield* insertUnits("doubling", 600)
        yield* statistics.noteWrites(600)
        assert.strictEqual(analyses.length, 1, "the first 500 rows are analyzed")
        assert.isTrue((yield* maintenanceFacts).analyzed)
        // 550 more is past a fifth of 600 (the cadence before) but short of doubling it.
        yield* insertUnits("doubling-more", 550)
        yield* statistics.noteWrites(550)
        assert.strictEqual(analyses.length, 1, analyses.join("\n"))
        yield* insertUnits("doubled", 100)
        yield* statistics.noteWrites(100)
        assert.strictEqual(analyses.length, 2, analyses.join("\n"))
        assert.match(analyses[1]!, /^ANALYZE memory_units/)
      }).pipe(Effect.scoped, Effect.provide(Layer.merge(postgresDatabase(tier!), countAnalyses))),
    { timeout: 60_000 }
  )
})
