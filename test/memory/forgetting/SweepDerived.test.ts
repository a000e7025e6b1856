/**
 * The expiry and retention sweeps reach everything derived, as forget does (one code path), over the real HTTP server
 * on both tiers: after a memory is swept, no dream run, prediction, anomaly, dataset set, access event or mental model
 * cites it, its document and chunk are gone when nothing else uses them, and the bank's kept `.brain` file no longer
 * holds its text (`test/support/DerivedState.ts`).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AccessTelemetry } from "../../../src/activity/AccessTelemetry.ts"
import { assertNothingLeft, lasting, withDerived } from "../../support/DerivedState.ts"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()

layer(testApp(), { excludeTestServices: true, timeout: "3 minutes" })("sweeps reach everything derived", (it) => {
  it.effect("an expired memory is swept with its dream evidence, anomalies, dataset sets, access history, chunks and brain file", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bank = "swept-expiry"
      const id = yield* withDerived(bank, "Zephyrine keeps the spare office key under the blue flowerpot.", {
        expires_at: inAnHour()
      })
      yield* sql`UPDATE memory_units SET expires_at = now() - interval '1 second' WHERE id = ${id}`
      // A new expiring memory wakes the scheduler, which finds the expired one due and sweeps it.
      yield* ok("POST", `${bankPath(bank)}/memories`, {
        items: [{ content: "The fire drill is next Thursday.", expires_at: inAnHour() }]
      })
      yield* eventually(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${id}`.pipe(Effect.orDie),
        (rows) => rows[0]!.n === 0,
        Duration.seconds(30)
      )
      yield* settled(bank)
      yield* assertNothingLeft(bank, id)
    }))

  it.effect("a memory evicted by retention is swept with everything derived from it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bank = "swept-retention"
      const id = yield* withDerived(bank, "Zephyrine keeps the spare office key under the blue flowerpot.", {})
      yield* sql`UPDATE memory_units SET created_at = now() - interval '3 days' WHERE id = ${id}`
      // The policy change checks the bank at once and queues the sweep.
      yield* ok("PATCH", `${bankPath(bank)}/config`, {
        updates: { retention: { max_age_days: { world: 2, experience: 2 } } }
      })
      yield* eventually(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${id}`.pipe(Effect.orDie),
        (rows) => rows[0]!.n === 0,
        Duration.seconds(30)
      )
      yield* settled(bank)
      yield* assertNothingLeft(bank, id)
    }))

  it.effect("a read's access event still buffered when the sweep runs is not written after it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const telemetry = yield* AccessTelemetry
      const bank = "swept-buffered"
      const base = bankPath(bank)
      yield* ok("POST", `${base}/memories`, {
        items: [{ content: "Zephyrine keeps the spare office key under the blue flowerpot." }, { content: lasting }]
      })
      const listed = (yield* ok("GET", `${base}/memories/list?limit=100`)).body.items as Array<any>
      const id = listed.find((item) => item.text.includes("flowerpot")).id as string
      yield* sql`UPDATE memory_units SET created_at = now() - interval '3 days' WHERE id = ${id}`
      // A read of the memory, buffered: the writer waits a second before it writes, and the sweep starts at once.
      yield* telemetry.record(bank, [{ type: "memory", id, score: 0.9 }])
      yield* ok("PATCH", `${base}/config`, { updates: { retention: { max_age_days: { world: 2, experience: 2 } } } })
      yield* eventually(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${id}`.pipe(Effect.orDie),
        (rows) => rows[0]!.n === 0,
        Duration.seconds(30)
      )
      yield* settled(bank)
      yield* telemetry.flush
      const events = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_access_events
        WHERE bank_id = ${bank} AND item_id = ${id}`
      assert.strictEqual(events[0]!.n, 0, "no access event names the swept memory")
    }))
})
