/**
 * Access telemetry keeps up with the reads that make it. Between requests it writes in small slices, so the next
 * request waits for one slice at most; under requests that never pause there is no lull to protect, and a round
 * writes everything due at once instead of one slice per longest wait (which fell behind: 3,000 rows would take
 * 30 waits of half a second, while steady reads make that many every second).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
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
  }
)
