/**
 * Access telemetry keeps up with the reads that make it. Between requests it writes in small slices, so the next
 * request waits for one slice at most; under requests that never pause there is no lull to protect, and a round
 * writes everything due at once instead of one slice per longest wait (which fell behind: 3,000 rows would take
 * 30 waits of half a second, while steady reads make that many every second). A bank's own flush (a sweep's or
 * forget's, a reader of its telemetry) writes that bank's reads only, not another bank's backlog. A write is one
 * statement for the events and the memories' counters: on the embedded tier every statement is a turn at the one
 * session that retains wait for.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { Foreground } from "../../src/bank/Foreground.ts"
import { AccessTelemetry } from "../../src/activity/AccessTelemetry.ts"
import { ok } from "../support/HttpCalls.ts"
import { testApp } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

layer(testApp({ backgroundMaxWait: Duration.millis(500) }), { excludeTestServices: true, timeout: "2 minutes" })(
  "access telemetry",
  (it) => {
    it.effect("under requests that never pause, one round writes all that is due", () =>
      Effect.gen(function*() {
        const telemetry = yield* AccessTelemetry
        const foreground = yield* Foreground
        const sql = yield* SqlClient.SqlClient
        yield* ok("PUT", "/v1/default/banks/busy", {})
        const busy = yield* Effect.forkChild(foreground.request(Effect.never))
        const before = (yield* telemetry.stats).written
        for (let read = 0; read < 30; read++) {
          const items = Array.from(
            { length: 100 },
            (_, n) => ({ type: "memory" as const, id: `m-${read}-${n}`, score: 0.5 })
          )
          yield* telemetry.record("busy", items, "recall")
        }
        // One round: the one-second gathering delay, one longest wait, the write. Thirty slices took 16 s.
        // (The buffer empties when a write takes it; `written` counts once the write has committed.)
        const stats = yield* eventually(
          telemetry.stats,
          (stats) => stats.written - before === 3000,
          Duration.seconds(6)
        )
        assert.strictEqual(stats.buffered, 0)
        assert.strictEqual(stats.dropped, 0)
        const rows = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = 'busy'`
        assert.strictEqual(rows[0]!.n, 3000)
        yield* Fiber.interrupt(busy)
      }))

    it.effect("a bank's own flush writes that bank's reads and leaves another bank's backlog buffered", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* ok("PUT", "/v1/default/banks/hammered", {})
        yield* ok("PUT", "/v1/default/banks/swept", {})
        // A writer of its own whose background round would come only after ten minutes: what is written here is
        // what the flushes wrote.
        const context = yield* Layer.build(AccessTelemetry.layerWith({ flushDelay: Duration.minutes(10) }))
        const telemetry = Context.get(context, AccessTelemetry)
        for (let read = 0; read < 30; read++) {
          const items = Array.from(
            { length: 100 },
            (_, n) => ({ type: "chunk" as const, id: `c-${read}-${n}`, score: 0.5 })
          )
          yield* telemetry.record("hammered", items, "recall")
          if (read % 10 === 0) yield* telemetry.record("swept", [{ type: "chunk", id: `s-${read}`, score: 0.9 }])
        }
        const count = (bank: string) =>
          Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = ${bank}`,
            (rows) => rows[0]!.n
          )

        yield* telemetry.writeBufferedOf("swept")
        assert.strictEqual(yield* count("swept"), 3, "the bank's own reads are written")
        assert.strictEqual(yield* count("hammered"), 0, "another bank's backlog was written with them")
        assert.strictEqual((yield* telemetry.stats).buffered, 3000)

        yield* telemetry.writeBuffered
        assert.strictEqual(yield* count("hammered"), 3000)
        assert.strictEqual((yield* telemetry.stats).buffered, 0)
      }).pipe(Effect.scoped))

    it.effect("a write is one statement: the events and the memories' counters together", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* ok("POST", "/v1/default/banks/counted/memories", { items: [{ content: "Ada keeps bees in Lyon." }] })
        const [memory] = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = 'counted' LIMIT 1`
        const context = yield* Layer.build(AccessTelemetry.layerWith({ flushDelay: Duration.minutes(10) }))
        const telemetry = Context.get(context, AccessTelemetry)
        yield* telemetry.record("counted", [{ type: "memory", id: memory!.id, score: 0.9 }], "recall")
        yield* telemetry.record("counted", [
          { type: "memory", id: memory!.id, score: 0.8 },
          { type: "memory", id: "gone-since-the-read", score: 0.7 }
        ], "recall")
        const statements: Array<string> = []
        yield* telemetry.writeBufferedOf("counted").pipe(
          Effect.provideService(Statement.CurrentTransformer, (statement) => {
            statements.push(statement.compile()[0])
            return Effect.succeed(statement)
          })
        )
        assert.strictEqual(statements.length, 1, statements.join("\n---\n"))
        const [events] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM memory_access_events WHERE bank_id = 'counted'`
        assert.strictEqual(events!.n, 3)
        const counts = yield* sql<{ unitId: string; accessCount: number }>`
          SELECT unit_id, access_count FROM memory_access_counts WHERE bank_id = 'counted'`
        assert.deepStrictEqual(counts, [{ unitId: memory!.id, accessCount: 2 }])
      }).pipe(Effect.scoped))
  }
)
