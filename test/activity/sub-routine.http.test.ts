/**
 * The sub-routine and the activity model over HTTP: the histogram follows the hours of the bank's facts and reads
 * (seeded through the telemetry table), predictions cover exactly the next `horizon_hours`, a waiting identical
 * sub-routine is reused, `force_rebuild` recounts what an incremental run keeps, bad input is refused naming the
 * field, the routes answer 404 naming the setting when the brain is off, and the start-up warm-up.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { defaultBrainSettings } from "../../src/brain/BrainSettings.ts"
import { Operations } from "../../src/bank/Operations.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../support/TestTasks.ts"
import { freshDatabaseSettings, testApp, TestServer } from "../support/TestServer.ts"

const bank = "activity"
const base = `/v1/default/banks/${bank}`

/** Three facts said at 07:xx UTC on different days. */
const morningFacts = [
  { content: "Mara watered the orchids on the balcony.", timestamp: "2024-03-04T07:10:00Z" },
  { content: "Mara repaired the garden gate with a new hinge.", timestamp: "2024-03-05T07:40:00Z" },
  { content: "Mara bought seeds for the spring tomatoes.", timestamp: "2024-03-06T07:05:00Z" }
]

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? undefined : { json })
  })

/** Five reads at 19:xx UTC, written to the telemetry table as recalls would have been. */
const seedEveningReads = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const memory = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} LIMIT 1`)[0]!
    for (let day = 1; day <= 5; day++) {
      const at = new Date(Date.UTC(2024, 3, day, 19, 15))
      yield* sql`INSERT INTO memory_access_events (bank_id, access_id, source, item_type, item_id, score, accessed_at)
      VALUES (${bank}, ${`seed-${day}`}, 'recall', 'memory', ${memory.id}, 0.5, ${at})`
    }
  }).pipe(Effect.orDie)

const sharesOf = (body: any) => new Map<number, number>(body.histogram.map((p: any) => [p.hour_utc, p.score]))

const finished = (id: string, base: string) =>
  eventually(
    request("GET", `${base}/operations/${id}`),
    (r) => r.body.status === "completed" || r.body.status === "failed"
  )

const resultOf = (id: string, base: string) =>
  Effect.gen(function*() {
    const status = yield* finished(id, base)
    assert.strictEqual(status.body.status, "completed", status.text)
    const result = yield* request("GET", `${base}/operations/${id}/result`)
    assert.strictEqual(result.status, 200, result.text)
    return result.body.result
  })

/** The next `horizon` UTC hours after the current one. */
/**
 * A bank of the test's own with the morning facts and the evening reads: tests run sub-routines and move reads,
 * so none shares its bank with another. With `folded`, one incremental sub-routine has folded the reads in.
 */
const seeded = (bank: string, options: { readonly folded?: boolean } = {}) =>
  Effect.gen(function*() {
    const base = `/v1/default/banks/${bank}`
    assert.strictEqual((yield* request("PUT", base, {})).status, 200)
    const retained = yield* request("POST", `${base}/memories`, { items: morningFacts })
    assert.strictEqual(retained.status, 200, retained.text)
    yield* seedEveningReads(bank)
    if (options.folded) {
      const run = yield* request("POST", `${base}/sub-routine`, { mode: "incremental" })
      assert.strictEqual(run.status, 200, run.text)
      yield* resultOf(run.body.operation_id, base)
    }
    return base
  })

const nextHours = (horizon: number) => {
  const current = new Date().getUTCHours()
  return Array.from({ length: horizon }, (_, i) => (current + 1 + i) % 24)
}

layer(testApp({}, TestTaskHandlers), { excludeTestServices: true, timeout: "2 minutes" })("sub-routine", (it) => {
  it.effect("the histogram counts facts by the hour they were said and reads by the hour they happened", () =>
    Effect.gen(function*() {
      const bank = "activity-histogram"
      const base = `/v1/default/banks/${bank}`
      assert.strictEqual((yield* request("PUT", base, {})).status, 200)
      const empty = yield* request("GET", `${base}/sub-routine/histogram`)
      assert.strictEqual(empty.status, 200, empty.text)
      assert.strictEqual(empty.body.histogram.length, 24)
      assert.strictEqual(empty.body.sample_count, 0)
      assert.isTrue(empty.body.histogram.every((p: any) => p.score === 0))

      const retained = yield* request("POST", `${base}/memories`, { items: morningFacts })
      assert.strictEqual(retained.status, 200, retained.text)
      yield* seedEveningReads(bank)
      const histogram = yield* request("GET", `${base}/sub-routine/histogram`)
      assert.strictEqual(histogram.status, 200, histogram.text)
      const facts = (yield* request("GET", `${base}/memories/list?limit=100`)).body.total
      assert.isAtLeast(facts, 3)
      assert.strictEqual(histogram.body.sample_count, facts + 5)
      assert.strictEqual(histogram.body.model_signature, "histogram-v1")
      assert.strictEqual(histogram.body.built_at, null, "nothing stored before a sub-routine ran")
      const shares = sharesOf(histogram.body)
      assert.closeTo(shares.get(19)!, 5 / (facts + 5), 1e-4)
      assert.closeTo(shares.get(7)!, facts / (facts + 5), 1e-4)
      assert.deepStrictEqual([...shares].filter(([, s]) => s > 0).map(([h]) => h).sort((a, b) => a - b), [7, 19])
    }))

  it.effect("predictions cover exactly the next horizon_hours, scored by the activity expected in them", () =>
    Effect.gen(function*() {
      const base = yield* seeded("activity-predictions")
      const histogram = sharesOf((yield* request("GET", `${base}/sub-routine/histogram`)).body)
      for (const horizon of [1, 6, 24, 48]) {
        const response = yield* request("GET", `${base}/sub-routine/predictions?horizon_hours=${horizon}`)
        assert.strictEqual(response.status, 200, response.text)
        assert.strictEqual(response.body.horizon_hours, horizon)
        const expected = nextHours(Math.min(horizon, 24))
        const got = response.body.predictions.map((p: any) => p.hour_utc)
        assert.sameMembers(got, expected, `horizon ${horizon}`)
        // Each hour's share of what the window expects: its hourly share, renormalized over the window.
        const total = expected.reduce((sum, hour) => sum + histogram.get(hour)!, 0)
        for (const point of response.body.predictions) {
          assert.closeTo(point.score, total === 0 ? 0 : histogram.get(point.hour_utc)! / total, 1e-4)
        }
        const scores = response.body.predictions.map((p: any) => p.score)
        assert.deepStrictEqual(scores, [...scores].sort((a: number, b: number) => b - a), "highest first")
      }
      const day = yield* request("GET", `${base}/sub-routine/predictions`)
      assert.strictEqual(day.body.horizon_hours, 24)
      assert.strictEqual(day.body.predictions[0].hour_utc, 19, "the evening hour leads a full day")
      assert.strictEqual(day.body.predictions.length, 24)
    }))

  it.effect("an identical sub-routine still waiting is reused; its result carries the brain build and predictions", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const bank = "activity-reuse"
      const base = yield* seeded(bank)
      // Hold the bank's worker so the requests below find the first one still waiting.
      const held =
        (yield* operations.submit({ bankId: bank, taskType: "test_block", payload: { key: "hold-activity" } })).id
      yield* eventually(request("GET", `${base}/operations/${held}`), (r) => r.body.status === "running")
      const first = yield* request("POST", `${base}/sub-routine`, { mode: "warmup", horizon_hours: 6 })
      const second = yield* request("POST", `${base}/sub-routine`, { mode: "warmup", horizon_hours: 6 })
      const other = yield* request("POST", `${base}/sub-routine`, { mode: "warmup", horizon_hours: 12 })
      assert.strictEqual(first.status, 200, first.text)
      assert.deepStrictEqual([first.body.deduplicated, second.body.deduplicated, other.body.deduplicated], [
        false,
        true,
        false
      ])
      assert.strictEqual(second.body.operation_id, first.body.operation_id)
      assert.notStrictEqual(other.body.operation_id, first.body.operation_id)
      assert.strictEqual(first.body.status, "pending")
      yield* Deferred.succeed(TestTasks.blockers.get("hold-activity")!, undefined)

      const result = yield* resultOf(first.body.operation_id, base)
      assert.strictEqual(result.mode, "warmup")
      assert.strictEqual(result.horizon_hours, 6)
      const live = (yield* request("GET", `${base}/memories/list?limit=1000`)).body.total
      assert.strictEqual(result.brain.nodes, live, "the warm-up built the bank's brain")
      assert.sameMembers(result.predictions.map((p: any) => p.hour_utc), nextHours(6))
      assert.isAbove(result.activity.sample_count, 0)
      const twelve = yield* resultOf(other.body.operation_id, base)
      assert.strictEqual(twelve.predictions.length, 12)
      const listed = yield* request("GET", `${base}/operations?type=sub_routine`)
      assert.isAtLeast(listed.body.operations?.length ?? listed.body.items?.length ?? 0, 2, listed.text)
    }))

  it.effect("force_rebuild recounts the activity model from the tables; an incremental run keeps what it folded in", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bank = "activity-rebuild"
      const base = yield* seeded(bank, { folded: true })
      const stored = sharesOf((yield* request("GET", `${base}/sub-routine/histogram`)).body)
      assert.isAbove(stored.get(19)!, 0)
      // The seeded reads move from 19:15 to 23:15: already folded in, an incremental run cannot see the change.
      yield* sql`UPDATE memory_access_events SET accessed_at = accessed_at + interval '4 hours'
        WHERE bank_id = ${bank} AND access_id LIKE 'seed-%'`.pipe(Effect.orDie)
      const incremental = yield* request("POST", `${base}/sub-routine`, { mode: "incremental" })
      const kept = yield* resultOf(incremental.body.operation_id, base)
      assert.strictEqual(kept.activity.rebuilt, false)
      assert.strictEqual(kept.activity.new_events, 0)
      assert.isAbove(kept.activity.histogram[19].score, 0)
      assert.strictEqual(kept.activity.histogram[23].score, 0)
      const stale = sharesOf((yield* request("GET", `${base}/sub-routine/histogram`)).body)
      assert.deepStrictEqual(stale, stored)

      const forced = yield* request("POST", `${base}/sub-routine`, { mode: "incremental", force_rebuild: true })
      assert.strictEqual(forced.body.deduplicated, false)
      const rebuilt = yield* resultOf(forced.body.operation_id, base)
      assert.strictEqual(rebuilt.activity.rebuilt, true)
      assert.strictEqual(rebuilt.brain.rebuilt, true)
      assert.strictEqual(rebuilt.activity.histogram[19].score, 0)
      assert.closeTo(rebuilt.activity.histogram[23].score, stored.get(19)!, 1e-4)
      const after = yield* request("GET", `${base}/sub-routine/histogram`)
      assert.strictEqual(sharesOf(after.body).get(23), rebuilt.activity.histogram[23].score)
      assert.isString(after.body.built_at)
      // The bank holds a few memories, far below the size that keeps a file on its own: asked for, it is kept.
      const status = yield* request("GET", `${base}/brain/status`)
      assert.strictEqual(status.body.exists, true, status.text)
      assert.isAbove(status.body.size_bytes, 0)
    }))

  it.effect("bad input is refused naming the field; an unknown bank is 404; /version reports sub_routine", () =>
    Effect.gen(function*() {
      const base = yield* seeded("activity-refusals")
      const zero = yield* request("POST", `${base}/sub-routine`, { horizon_hours: 0 })
      assert.strictEqual(zero.status, 400, zero.text)
      assert.include(zero.body.detail, "horizon_hours")
      const long = yield* request("POST", `${base}/sub-routine`, { horizon_hours: 169 })
      assert.strictEqual(long.status, 400, long.text)
      const mode = yield* request("POST", `${base}/sub-routine`, { mode: "dream" })
      assert.strictEqual(mode.status, 400, mode.text)
      assert.include(mode.body.detail, "mode")
      const flag = yield* request("POST", `${base}/sub-routine`, { force_rebuild: "yes" })
      assert.strictEqual(flag.status, 400, flag.text)
      assert.include(flag.body.detail, "force_rebuild")
      const query = yield* request("GET", `${base}/sub-routine/predictions?horizon_hours=500`)
      assert.strictEqual(query.status, 400, query.text)
      assert.include(query.body.detail, "horizon_hours")
      const text = yield* request("GET", `${base}/sub-routine/predictions?horizon_hours=soon`)
      assert.strictEqual(text.status, 400, text.text)
      const missing = yield* request("GET", "/v1/default/banks/no-such-bank/sub-routine/histogram")
      assert.strictEqual(missing.status, 404, missing.text)
      const queued = yield* request("POST", "/v1/default/banks/no-such-bank/sub-routine", {})
      assert.strictEqual(queued.status, 404, queued.text)
      const version = yield* request("GET", "/version")
      assert.strictEqual(version.body.features.sub_routine, true)
    }))
})

const brainOff = { ...defaultBrainSettings, enabled: false }

layer(testApp({ brain: brainOff }), { excludeTestServices: true, timeout: "2 minutes" })(
  "sub-routine, brain off",
  (it) => {
    it.effect("the routes answer 404 naming SERVICE_API_BRAIN_ENABLED and /version says false", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* request("PUT", base, {})).status, 200)
        for (
          const [method, path] of [["GET", "/sub-routine/histogram"], ["GET", "/sub-routine/predictions"], [
            "POST",
            "/sub-routine"
          ], ["GET", "/brain/influence"]] as const
        ) {
          const response = yield* request(method, `${base}${path}`, method === "POST" ? {} : undefined)
          assert.strictEqual(response.status, 404, `${path}: ${response.text}`)
          assert.include(response.body.detail, "SERVICE_API_BRAIN_ENABLED")
        }
        const version = yield* request("GET", "/version")
        assert.strictEqual(version.body.features.sub_routine, false)
      }))
  }
)

layer(Layer.empty, { excludeTestServices: true, timeout: "2 minutes" })("sub-routine, start-up warm-up", (it) => {
  it.effect("with SERVICE_API_BRAIN_STARTUP_WARMUP every bank gets a warm-up sub-routine when the service starts", () =>
    Effect.gen(function*() {
      const database = freshDatabaseSettings()
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(testApp(database))
        const server = Context.get(context, TestServer)
        for (const name of ["warm-a", "warm-b"]) {
          assert.strictEqual((yield* server.request("PUT", `/v1/default/banks/${name}`, { json: {} })).status, 200)
        }
        yield* server.request("POST", "/v1/default/banks/warm-a/memories", { json: { items: morningFacts } })
      }))
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(
          testApp({ ...database, brain: { ...defaultBrainSettings, startupWarmup: true } })
        )
        const server = Context.get(context, TestServer)
        for (const name of ["warm-a", "warm-b"]) {
          const listed = yield* eventually(
            server.request("GET", `/v1/default/banks/${name}/operations?type=sub_routine`),
            (r) => JSON.stringify(r.body).includes("completed")
          )
          assert.strictEqual(listed.status, 200, listed.text)
        }
        const histogram = yield* server.request("GET", "/v1/default/banks/warm-a/sub-routine/histogram")
        assert.isString(histogram.body.built_at, "the warm-up stored the activity model")
        assert.isAbove(histogram.body.sample_count, 0)
      }))
    }))
})

layer(testApp({ brain: { ...defaultBrainSettings, predictionMode: "kalman_lite" } }), {
  excludeTestServices: true,
  timeout: "2 minutes"
})(
  "sub-routine, kalman_lite",
  (it) => {
    it.effect("SERVICE_API_BRAIN_PREDICTION_MODE=kalman_lite smooths the hourly shares from build to build", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* request("PUT", base, {})).status, 200)
        assert.strictEqual((yield* request("POST", `${base}/memories`, { items: morningFacts })).status, 200)
        const first = yield* request("POST", `${base}/sub-routine`, { mode: "warmup" })
        const built = yield* resultOf(first.body.operation_id, base)
        assert.strictEqual(built.activity.model_signature, "kalman_lite-v1")
        assert.strictEqual(built.activity.histogram[7].score, 1, "one build from nothing: the measured shares")

        yield* seedEveningReads(bank)
        const facts = (yield* request("GET", `${base}/memories/list?limit=100`)).body.total
        const second = yield* request("POST", `${base}/sub-routine`, { mode: "incremental" })
        const smoothed = yield* resultOf(second.body.operation_id, base)
        assert.strictEqual(smoothed.activity.new_events, 5)
        const measured = 5 / (facts + 5)
        const evening = smoothed.activity.histogram[19].score
        // The filter trusts its earlier estimate a little: the new evening habit shows, but below its raw share.
        assert.isAbove(evening, 0)
        assert.isBelow(evening, measured - 0.01)
        const read = yield* request("GET", `${base}/sub-routine/histogram`)
        assert.strictEqual(read.body.model_signature, "kalman_lite-v1")
        assert.strictEqual(sharesOf(read.body).get(19), evening, "a read shows the stored model")
      }))
  }
)
