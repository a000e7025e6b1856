/**
 * PGlite on its worker thread, where the thread itself shows: start-up failures, the order of calls, replies bigger
 * than a message chunk, closing, and a worker that dies under a statement. SQL through it (parameters, vectors,
 * transactions, errors, migrations, persistence) is covered by SqlLive.test.ts, which runs on both threads.
 */
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlError } from "effect/sql/SqlError"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import type { PgliteProtocol } from "../../../layers/storage/PgliteStream.ts"
import * as PgliteWorker from "../../../layers/storage/PgliteWorker.ts"
import * as SqlLive from "../../../layers/storage/SqlLive.ts"
import { freshPgliteDataDir } from "../../support/PgliteCopy.ts"
import { simpleQuery } from "../../support/PgWire.ts"

/** A worker with PGlite open in memory, shared by the tests that leave it running. */
class SharedWorker
  extends Context.Service<SharedWorker, PgliteWorker.PgliteWorker>()("test/layers/storage/SharedWorker")
{
  static readonly layer = Layer.effect(
    SharedWorker,
    Effect.acquireRelease(Effect.orDie(PgliteWorker.start(undefined)), (db) => Effect.promise(() => db.close()))
  )
}

/** Runs one simple query as its own exclusive batch; the text of each row's first column. */
const texts = (db: PgliteProtocol, sql: string) =>
  Effect.promise(() =>
    db.runExclusive(() => {
      const chunks: Array<Uint8Array> = []
      return db.execProtocolRawStream(simpleQuery(sql), { onRawData: (data) => chunks.push(data) }).then(() =>
        PgProtocol.makeParser().push(Buffer.concat(chunks)).flatMap((message) =>
          message._tag === "DataRow" && message.values[0] != null ? [Buffer.from(message.values[0]).toString()] : []
        )
      )
    })
  )

/** Lets the test know when a batch containing `marker` has been handed to the worker. */
const watching = (db: PgliteWorker.PgliteWorker, marker: string) => {
  let sent = (): void => {}
  const handedOver = new Promise<void>((resolve) => (sent = resolve))
  const protocol: PgliteProtocol = {
    get closed() {
      return db.closed
    },
    runExclusive: (f) => db.runExclusive(f),
    execProtocolRawStream: (message, options) => {
      const reply = db.execProtocolRawStream(message, options)
      if (Buffer.from(message).includes(marker)) sent()
      return reply
    }
  }
  return { protocol, handedOver: Effect.promise(() => handedOver) }
}

/** The messages along an error's cause chain. */
const causes = (error: unknown): string => error instanceof Error ? `${error.message} <- ${causes(error.cause)}` : ""

const pgliteTier = (process.env["ENGRAM_TEST_DATABASE"] ?? "pglite") === "pglite"

describe.runIf(pgliteTier)("PgliteWorker", () => {
  layer(SharedWorker.layer, { timeout: "60 seconds", excludeTestServices: true })("a running worker", (it) => {
    it.effect("runs exclusive callers one after another, in the order they asked", () =>
      Effect.gen(function*() {
        const db = yield* SharedWorker
        yield* texts(db, "CREATE TABLE steps (n int)")
        const events: Array<string> = []
        const step = (n: number) =>
          db.runExclusive(() => {
            events.push(`start ${n}`)
            return db.execProtocolRawStream(simpleQuery(`INSERT INTO steps VALUES (${n})`))
              .then(() => db.execProtocolRawStream(simpleQuery(`INSERT INTO steps VALUES (${n * 10})`)))
              .then(() => {
                events.push(`end ${n}`)
                return n
              })
          })
        const results = yield* Effect.promise(() => Promise.all([1, 2, 3].map(step)))
        assert.deepStrictEqual(results, [1, 2, 3])
        assert.deepStrictEqual(events, ["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"])
        assert.deepStrictEqual(yield* texts(db, "SELECT string_agg(n::text, ',') FROM steps"), ["1,10,2,20,3,30"])
      }))

    it.effect("answers a reply of many megabytes whole", () =>
      Effect.gen(function*() {
        const db = yield* SharedWorker
        const [text] = yield* texts(db, "SELECT repeat('0123456789', 1000000)")
        assert.strictEqual(text?.length, 10_000_000)
        assert.strictEqual(text?.slice(-10), "0123456789")
      }))
  })

  // The tests below each start a worker of their own, on a copy of the run's migrated template (an in-memory
  // database runs initdb first, some 3 s; the shared worker above is the in-memory one).
  it.live("closes after the batches already sent, then refuses more", () =>
    Effect.gen(function*() {
      const db = yield* Effect.orDie(PgliteWorker.start(freshPgliteDataDir()))
      const chunks: Array<Uint8Array> = []
      const inFlight = db.execProtocolRawStream(simpleQuery("SELECT 42"), { onRawData: (data) => chunks.push(data) })
      yield* Effect.promise(() => db.close())
      yield* Effect.promise(() => inFlight)
      assert.isAbove(Buffer.concat(chunks).length, 0)
      assert.isTrue(db.closed)
      const refused = yield* Effect.flip(Effect.tryPromise(() => db.execProtocolRawStream(simpleQuery("SELECT 1"))))
      assert.include(String(refused.cause), "closed")
    }), 60_000)

  it.live("fails the statement in flight and every later one when the worker dies", () =>
    Effect.gen(function*() {
      const db = yield* Effect.orDie(PgliteWorker.start(freshPgliteDataDir()))
      const { protocol, handedOver } = watching(db, "pg_sleep")
      const sql = yield* SqlLive.pgliteClient(protocol, "public", true).pipe(Effect.orDie)
      const slow = yield* sql`SELECT pg_sleep(30)`.pipe(Effect.forkChild)
      yield* handedOver
      yield* Effect.promise(() => db.terminate())
      // Bounded waits: a hang fails the test here rather than at the suite's time limit.
      const inFlight = yield* Fiber.join(slow).pipe(Effect.flip, Effect.timeout("10 seconds"))
      assert.instanceOf(inFlight, SqlError)
      assert.include(causes(inFlight), "the PGlite worker stopped")
      const later = yield* sql`SELECT 1`.pipe(Effect.flip, Effect.timeout("10 seconds"))
      assert.instanceOf(later, SqlError)
      assert.isTrue(db.closed)
      yield* Effect.promise(() => db.close())
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)), 60_000)

  it.live(
    "fails start-up with DatabaseStartupError when PGlite cannot open its data directory",
    () =>
      Effect.gen(function*() {
        const directory = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(Path.join(tmpdir(), "engram-pglite-worker-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        const notADirectory = Path.join(directory, "file")
        yield* Effect.promise(() => writeFile(notADirectory, "not a database"))
        const error = yield* Layer.build(SqlLive.pglite({ dataDir: notADirectory, thread: "worker" })).pipe(
          Effect.scoped,
          Effect.flip,
          Effect.timeout("30 seconds")
        )
        assert.strictEqual(error._tag, "DatabaseStartupError")
        assert.include(error.message, `Cannot open PGlite at ${notADirectory}: EEXIST`)
      }).pipe(Effect.scoped),
    60_000
  )
})
