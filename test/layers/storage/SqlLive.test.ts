/**
 * The SQL layers against real SQL. The vitest project picks the database through `ENGRAM_TEST_DATABASE` ("pglite",
 * or a PostgreSQL URL whose run gets a fresh `t_<random>` schema, dropped afterwards); run outside those projects,
 * the file covers PGlite, and PostgreSQL too when `ENGRAM_TEST_DATABASE_URL` is set.
 */
import { NodeServices } from "@effect/platform-node"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { SqlError } from "effect/sql/SqlError"
import * as Stream from "effect/Stream"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { type AddressInfo, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import * as PgVector from "../../../layers/storage/PgVector.ts"
import * as SqlLive from "../../../layers/storage/SqlLive.ts"
import { freshPgliteDataDir } from "../../support/PgliteCopy.ts"
import { freshSchemaName } from "../../support/TestRun.ts"

interface Backend {
  readonly name: string
  readonly schema: string
  readonly layer: Layer.Layer<SqlLive.Sql, SqlLive.DatabaseStartupError>
  /**
   * Whether a timeout fails a slow statement. PGlite on the event loop runs a statement synchronously to the end, so
   * the timer cannot fire before it has succeeded; on its worker thread the timer fires, but PGlite cannot cancel,
   * so the statement still runs to its end before the session is free again.
   */
  readonly interruptsStatements: boolean
}

const pgliteOn = (thread: SqlLive.PgliteThread): Backend => ({
  name: `pglite (${thread} thread, in memory)`,
  schema: "tenant_test",
  layer: SqlLive.pglite({ schema: "tenant_test", thread }),
  interruptsStatements: thread === "worker"
})
const pgliteBackends = [pgliteOn("worker"), pgliteOn("main")]

/** PostgreSQL in a schema of its own, dropped with the layer. */
const postgres = (url: string): Backend => {
  const schema = freshSchemaName()
  const dropSchema = Layer.effectDiscard(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() => sql`DROP SCHEMA ${sql(schema)} CASCADE`.withoutTransform.pipe(Effect.orDie))
  }))
  return {
    name: "postgres",
    schema,
    layer: dropSchema.pipe(Layer.provideMerge(SqlLive.postgres({ url: Redacted.make(url), schema }))),
    interruptsStatements: true
  }
}

const selected = process.env["ENGRAM_TEST_DATABASE"]
const fallbackUrl = process.env["ENGRAM_TEST_DATABASE_URL"]
const backends: ReadonlyArray<Backend> = selected === "pglite"
  ? pgliteBackends
  : selected !== undefined
  ? [postgres(selected)]
  : [...pgliteBackends, ...(fallbackUrl === undefined ? [] : [postgres(fallbackUrl)])]
/** Tests that need no particular server run once, in the PGlite tier. */
const runsPglite = backends.some((backend) => pgliteBackends.includes(backend))

for (const { name, schema, layer: backend, interruptsStatements } of backends) {
  layer(backend, { timeout: "60 seconds", excludeTestServices: true })(name, (it) => {
    it.effect("creates the schema and puts it first on the search_path", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE placed (id int)`
        const rows = yield* sql`
          SELECT n.nspname AS table_schema, current_schema() AS current_schema
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.oid = 'placed'::regclass`
        assert.deepStrictEqual(rows, [{ tableSchema: schema, currentSchema: schema }])
      }))

    it.effect("reads a real (float4) back as the number written, not its float32's full expansion", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE real_values (n int PRIMARY KEY, v real, vs real[])`
        const written = [0.6, 0.4978, 0.1, 1e-7, -2.5, 3.4e38, 123456.7, 0]
        yield* Effect.forEach(
          written,
          (v, n) => sql`INSERT INTO real_values (n, v, vs) VALUES (${n}, ${v}, ${`{${v},0.7}`}::real[])`
        )
        yield* sql`INSERT INTO real_values (n, v) VALUES (100, NULL), (101, 'NaN'), (102, '-Infinity'), (103, 0.123456789)`
        const rows = yield* sql<
          { n: number; v: number | null; vs: Array<number> | null }
        >`SELECT n, v, vs FROM real_values ORDER BY n`
        assert.deepStrictEqual(rows.slice(0, written.length).map((row) => row.v), written)
        assert.deepStrictEqual(rows.slice(0, written.length).map((row) => row.vs), written.map((v) => [v, 0.7]))
        const [none, nan, negative, long] = rows.slice(written.length)
        assert.strictEqual(none!.v, null)
        assert.isNaN(nan!.v)
        assert.strictEqual(negative!.v, -Infinity)
        // More digits than a float32 holds: the shortest decimal that is the same float32.
        assert.strictEqual(long!.v, 0.12345679)
        // A cast to float8 still gives the float32's exact value, for reads that want it.
        const [exact] = yield* sql<{ v: number }>`SELECT v::float8 AS v FROM real_values WHERE n = 0`
        assert.strictEqual(exact!.v, Math.fround(0.6))
      }))

    it.effect("round-trips vector, jsonb, text[], timestamptz, bool and floats with camelCase names", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          CREATE TABLE memory_items (
            id serial PRIMARY KEY,
            content text NOT NULL,
            embedding vector(3) NOT NULL,
            metadata jsonb NOT NULL,
            tags text[] NOT NULL,
            occurred_at timestamptz NOT NULL,
            is_pinned bool NOT NULL,
            weight float4 NOT NULL,
            score float8 NOT NULL,
            search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
          )`
        const occurredAt = new Date("2024-05-06T07:08:09.123Z")
        yield* sql`INSERT INTO memory_items ${
          sql.insert({
            content: "Alice adopted a cat named Miso",
            embedding: PgVector.param(new Float32Array([0.25, -1.5, 3])),
            metadata: JSON.stringify({ source_id: "chat-1", nested: { turn_no: 3 } }),
            tags: ["pets", "alice"],
            occurredAt,
            isPinned: true,
            weight: 0.5,
            score: 0.1
          })
        }`
        const rows = yield* sql`
          SELECT id, content, embedding, metadata, tags, occurred_at, is_pinned, weight, score FROM memory_items`
        assert.deepStrictEqual(rows, [{
          id: 1,
          content: "Alice adopted a cat named Miso",
          embedding: new Float32Array([0.25, -1.5, 3]),
          metadata: { source_id: "chat-1", nested: { turn_no: 3 } },
          tags: ["pets", "alice"],
          occurredAt,
          isPinned: true,
          weight: 0.5,
          score: 0.1
        }])
        const matches = yield* sql<{ id: number }>`
          SELECT id FROM memory_items WHERE search @@ plainto_tsquery('english', ${"cats"})`
        assert.deepStrictEqual(matches, [{ id: 1 }])
      }))

    it.effect("decodes int8 to bigint unless the query casts it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql`SELECT count(*) AS raw, count(*)::int AS cast FROM generate_series(1, 3)`
        assert.deepStrictEqual(row, { raw: 3n, cast: 3 })
      }))

    it.effect("finds nearest neighbours by cosine distance through an HNSW index", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE neighbours (id int PRIMARY KEY, embedding vector(3) NOT NULL)`
        const points = Arr.map(
          [[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0]] as const,
          (embedding, index) => ({ id: index + 1, embedding: PgVector.param(embedding) })
        )
        yield* sql`INSERT INTO neighbours ${sql.insert(points)}`
        yield* sql`CREATE INDEX neighbours_embedding_idx ON neighbours USING hnsw (embedding vector_cosine_ops)`
        const query = PgVector.param([1, 0.05, 0])
        const nearest = sql<{ id: number; distance: number }>`
          SELECT id, embedding <=> ${query} AS distance FROM neighbours ORDER BY embedding <=> ${query} LIMIT 3`
        const { rows, plan } = yield* sql.withTransaction(Effect.gen(function*() {
          // The planner prefers a scan on five rows; forbid it to prove the index answers the query.
          yield* sql`SET LOCAL enable_seqscan = off`
          const plan = yield* sql<Record<string, string>>`
            EXPLAIN SELECT id FROM neighbours ORDER BY embedding <=> ${query} LIMIT 3`
          return { rows: yield* nearest, plan: plan.flatMap((line) => Object.values(line)).join("\n") }
        }))
        assert.deepStrictEqual(rows.map((row) => row.id), [1, 2, 3])
        assert.isTrue(rows[0]!.distance < rows[1]!.distance)
        assert.include(plan, "neighbours_embedding_idx")
      }))

    it.effect("fails a bad statement with SqlError and keeps the connection usable", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const error = yield* Effect.flip(sql`SELEC 1`)
        assert.instanceOf(error, SqlError)
        assert.strictEqual(error.reason._tag, "SqlSyntaxError")
        yield* sql`CREATE TABLE uniques (id int PRIMARY KEY)`
        yield* sql`INSERT INTO uniques VALUES (${1})`
        const duplicate = yield* Effect.flip(sql`INSERT INTO uniques VALUES (${1})`)
        assert.strictEqual(duplicate.reason._tag, "UniqueViolation")
        const badParameter = yield* Effect.flip(sql`SELECT ${"not a vector"}::vector AS v`)
        assert.instanceOf(badParameter, SqlError)
        assert.deepStrictEqual(yield* sql`SELECT 1 AS ok`, [{ ok: 1 }])
      }))

    it.effect("replaces the connection after a row the driver cannot decode", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // No codec is registered for halfvec, and its binary form is not UTF-8: the driver drops the connection.
        const undecodable = yield* Effect.flip(sql`SELECT '[-1,-2]'::halfvec AS h`)
        assert.instanceOf(undecodable, SqlError)
        assert.deepStrictEqual(yield* sql`SELECT current_schema() AS schema`, [{ schema }])
      }))

    it.effect("commits and rolls back transactions", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE ledger (entry text PRIMARY KEY)`
        yield* sql.withTransaction(sql`INSERT INTO ledger VALUES ('committed')`)
        const failed = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ledger VALUES ('rolled back')`
          return yield* Effect.fail("abort" as const)
        })).pipe(Effect.flip)
        assert.strictEqual(failed, "abort")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ledger VALUES ('outer')`
          const duplicate = yield* sql.withTransaction(sql`INSERT INTO ledger VALUES ('outer')`).pipe(Effect.flip)
          assert.strictEqual(duplicate.reason._tag, "UniqueViolation")
        }))
        const entries = yield* sql<{ entry: string }>`SELECT entry FROM ledger ORDER BY entry`
        assert.deepStrictEqual(entries.map((row) => row.entry), ["committed", "outer"])
      }))

    it.effect("serializes concurrent statements from many fibers", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE counters (fiber int PRIMARY KEY, square int NOT NULL)`
        const results = yield* Effect.forEach(
          Array.from({ length: 50 }, (_, index) => index),
          (index) =>
            Effect.gen(function*() {
              yield* sql`INSERT INTO counters VALUES (${index}, ${index * index})`
              const [row] = yield* sql<{ square: number }>`SELECT square FROM counters WHERE fiber = ${index}`
              return row?.square
            }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(results, Array.from({ length: 50 }, (_, index) => index * index))
      }))

    it.effect("keeps other fibers out of an open transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE isolated (id int)`
        const inserted = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO isolated VALUES (1)`
          yield* Deferred.succeed(inserted, undefined)
          yield* Deferred.await(release)
          return yield* Effect.fail("roll back" as const)
        })).pipe(Effect.forkChild)
        yield* Deferred.await(inserted)
        const reader = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM isolated`.pipe(Effect.forkChild)
        yield* Effect.yieldNow
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(Exit.isFailure(yield* Fiber.await(writer)))
        assert.deepStrictEqual(yield* Fiber.join(reader), [{ n: 0 }])
      }))

    it.effect("runs PgMigrator migrations into the schema", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const migrations = {
          "0001_first": sql`CREATE TABLE migrated (id int PRIMARY KEY, embedding vector(2))`,
          "0002_second": sql`INSERT INTO migrated VALUES (1, '[1,2]')`
        }
        const run = PgMigrator.run({ loader: PgMigrator.fromRecord(migrations), table: "storage_test_migrations" })
          .pipe(Effect.provide(NodeServices.layer))
        assert.deepStrictEqual(yield* run, [[1, "first"], [2, "second"]])
        assert.deepStrictEqual(yield* run, [])
        assert.deepStrictEqual(yield* sql`SELECT embedding FROM ${sql(schema)}.migrated`.withoutTransform, [
          { embedding: new Float32Array([1, 2]) }
        ])
      }))

    it.effect("streams rows", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT n AS row_number FROM generate_series(1, 2000) n`.stream.pipe(Stream.runCollect)
        assert.strictEqual(rows.length, 2000)
        assert.deepStrictEqual(rows[1999], { rowNumber: 2000 })
      }))

    it.effect("stays usable after a statement times out", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [elapsed, slow] = yield* sql`SELECT pg_sleep(0.3)`.pipe(
          Effect.timeout("50 millis"),
          Effect.exit,
          Effect.timed
        )
        assert.strictEqual(Exit.isFailure(slow), interruptsStatements)
        // The driver cancels on a side connection; it must not sit out its own 5 s cancel timeout (the bound leaves
        // a loaded machine 4 s of slack over the 0.3 s statement).
        assert.isBelow(Duration.toMillis(elapsed), 4_500)
        assert.deepStrictEqual(yield* sql`SELECT 2 AS ok`, [{ ok: 2 }])
      }))
  })
}

describe.runIf(runsPglite)("pglite", () => {
  // Written on one thread and read back on the other: both open the same files, and closing flushes them.
  for (const [writer, reader] of [["worker", "main"], ["main", "worker"]] as const) {
    it.live(`keeps data in its data directory across restarts (${writer} thread, then ${reader})`, () =>
      Effect.gen(function*() {
        const dataDir = Path.join(yield* temporaryDirectory, "nested", "pglite")
        const write = Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TABLE kept (note text, embedding vector(2))`
          yield* sql`INSERT INTO kept VALUES (${"remember me"}, ${PgVector.param([3, 4])})`
        })
        const read = Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql`SELECT note, embedding FROM kept`
        })
        yield* write.pipe(Effect.provide(SqlLive.pglite({ dataDir, schema: "tenant_kept", thread: writer })))
        const rows = yield* read.pipe(
          Effect.provide(SqlLive.pglite({ dataDir, schema: "tenant_kept", thread: reader }))
        )
        assert.deepStrictEqual(rows, [{ note: "remember me", embedding: new Float32Array([3, 4]) }])
      }))
  }

  it.live("opens PGlite on the thread SERVICE_API_PGLITE_THREAD names (a worker by default), and refuses other values", () =>
    Effect.gen(function*() {
      // Each on a copy of the run's migrated template: where the data lives is not what this test is about, and an
      // in-memory PGlite runs initdb first (some 3 s each).
      const withThread = (value: string | undefined) =>
        SqlLive.pglite({ dataDir: freshPgliteDataDir() }).pipe(Layer.provide(ConfigProvider.layer(
          ConfigProvider.fromEnvRecord(value === undefined ? {} : { SERVICE_API_PGLITE_THREAD: value })
        )))
      // Only a worker thread lets a timer fire while a statement runs.
      const timedOut = (value: string | undefined) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return Exit.isFailure(yield* sql`SELECT pg_sleep(0.3)`.pipe(Effect.timeout("50 millis"), Effect.exit))
        }).pipe(Effect.provide(withThread(value)))
      assert.isTrue(yield* timedOut("worker"))
      assert.isTrue(yield* timedOut(undefined))
      assert.isFalse(yield* timedOut("main"))
      const error = yield* Layer.build(withThread("both")).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "DatabaseStartupError")
      assert.include(error.message, "SERVICE_API_PGLITE_THREAD")
    }))
})

const fromEnv = (env: Record<string, string>) =>
  SqlLive.layerConfig.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

describe.runIf(runsPglite)("layerConfig", () => {
  it.live("opens PGlite under SERVICE_API_DATA_DIR/pglite in SERVICE_API_DATABASE_SCHEMA", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT current_schema() AS schema`
      }).pipe(Effect.provide(fromEnv({ SERVICE_API_DATA_DIR: dataDir, SERVICE_API_DATABASE_SCHEMA: "tenant_cfg" })))
      assert.deepStrictEqual(rows, [{ schema: "tenant_cfg" }])
      assert.isTrue(existsSync(Path.join(dataDir, "pglite", "PG_VERSION")))
    }))

  it.live("uses SERVICE_API_DATABASE_URL when set and never falls back to PGlite", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      const error = yield* Layer.build(fromEnv({
        SERVICE_API_DATABASE_URL: "postgres://x:secret@127.0.0.1:1/db",
        SERVICE_API_DATA_DIR: dataDir
      })).pipe(Effect.scoped, Effect.flip)
      assert.include(error.message, "PostgreSQL at 127.0.0.1:1")
      assert.notInclude(error.message, "secret")
      assert.isFalse(existsSync(Path.join(dataDir, "pglite")))
    }))

  it.live("refuses a SERVICE_API_DATABASE_POOL_SIZE that is not a whole number from 1 to 1000", () =>
    Effect.gen(function*() {
      for (const size of ["0", "-3", "2.5", "many", "1001"]) {
        const error = yield* Layer.build(fromEnv({
          SERVICE_API_DATABASE_URL: "postgres://x:secret@127.0.0.1:1/db",
          SERVICE_API_DATABASE_POOL_SIZE: size
        })).pipe(Effect.scoped, Effect.flip)
        assert.strictEqual(error._tag, "ConfigError", size)
        assert.include(String(error), "SERVICE_API_DATABASE_POOL_SIZE", size)
        assert.notInclude(String(error), "secret")
      }
    }))
})

/** PostgreSQL's pool from configuration: `SERVICE_API_DATABASE_POOL_SIZE` sessions serve concurrent fibers at once. */
describe.runIf(selected !== undefined && selected !== "pglite" || selected === undefined && fallbackUrl !== undefined)(
  "layerConfig (PostgreSQL pool)",
  () => {
    it.live("runs as many transactions at once as the pool has connections", () =>
      Effect.gen(function*() {
        const url = selected !== undefined && selected !== "pglite" ? selected : fallbackUrl!
        const size = 3
        const sessions = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          // Every transaction waits until all of them hold a connection: with fewer connections this never ends.
          const inside = yield* Deferred.make<void>()
          let entered = 0
          return yield* Effect.forEach(Arr.range(1, size), () =>
            sql.withTransaction(Effect.gen(function*() {
              const [row] = yield* sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`
              entered += 1
              if (entered === size) yield* Deferred.succeed(inside, undefined)
              yield* Deferred.await(inside)
              return row!.pid
            })), { concurrency: "unbounded" }).pipe(Effect.timeout("20 seconds"))
        }).pipe(Effect.provide(fromEnv({
          SERVICE_API_DATABASE_URL: url,
          SERVICE_API_DATABASE_POOL_SIZE: String(size)
        })))
        assert.strictEqual(new Set(sessions).size, size)
      }))
  }
)

describe.runIf(runsPglite)("postgres start-up failures", () => {
  it.live("fails fast on a refused connection, naming host and port but not the password", () =>
    Effect.gen(function*() {
      // ECONNREFUSED in the message shows it did not wait for a timeout.
      const error = yield* Layer.build(SqlLive.postgres({ url: Redacted.make("postgres://x:secret@127.0.0.1:1/db") }))
        .pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "DatabaseStartupError")
      assert.include(error.message, "127.0.0.1:1")
      assert.include(error.message, "ECONNREFUSED")
      assert.notInclude(error.message, "secret")
      assert.notInclude(JSON.stringify(error), "secret")
    }))

  it.live("gives up after connectTimeout when the server never answers", () =>
    Effect.gen(function*() {
      const port = yield* silentServer
      const started = performance.now()
      const error = yield* Layer.build(SqlLive.postgres({
        url: Redacted.make(`postgres://x:secret@127.0.0.1:${port}/db`),
        connectTimeout: "500 millis"
      })).pipe(Effect.scoped, Effect.flip)
      const elapsed = performance.now() - started
      assert.include(error.message, `127.0.0.1:${port}`)
      assert.include(error.message, "timed out")
      assert.notInclude(error.message, "secret")
      // At least the configured 0.5 s, and clearly not the default 5 s (4 s of slack for a loaded machine).
      assert.isAtLeast(elapsed, 450)
      assert.isBelow(elapsed, 4_500)
    }))
})

/** A fresh directory under the system temp dir, removed with the scope. */
const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(Path.join(tmpdir(), "engram-storage-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

/** A TCP server on a free loopback port that accepts connections and never says a word. */
const silentServer = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
    const sockets = new Set<Socket>()
    const server = createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({
        port: (server.address() as AddressInfo).port,
        close: () => {
          for (const socket of sockets) socket.destroy()
          server.close()
        }
      })))
  }),
  (server) => Effect.sync(server.close)
).pipe(Effect.map((server) => server.port))
