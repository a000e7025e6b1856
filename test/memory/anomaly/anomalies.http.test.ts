/**
 * Anomalies and corrections over HTTP, with the offline defaults (GloVe vectors, offline extractor): a newer fact
 * contradicting an older one is reported with its correction and supersedes the older fact, which recall ranks
 * below its replacement and reflect names as replaced; acknowledge, resolve and suppress; a suppressed pair is
 * not reported again; bad input; and the setting that turns detection off.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { glove } from "../../../layers/models/embeddings/EmbeddingsLive.ts"
import { Llm } from "../../../src/models/Llm.ts"
import { sharedGloveCacheDir } from "../../layers/models/embeddings/GloveCacheDir.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const models = Layer.mergeAll(glove({ cacheDir: sharedGloveCacheDir }), Llm.layerNone)
const bank = "/v1/default/banks/anomalies"

const background = [
  { content: "The weather in Berlin was cold and grey that week.", timestamp: "2024-01-11T09:00:00Z" },
  { content: "Carol keeps a garden of rare orchids.", timestamp: "2024-02-01T09:00:00Z" },
  { content: "Dave bought a new bicycle for his commute.", timestamp: "2024-03-05T09:00:00Z" }
]

const retain = (items: ReadonlyArray<Record<string, unknown>>, path = bank) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `${path}/memories`, { json: { items } })
    assert.strictEqual(response.status, 200, response.text)
  })

const intelligence = (json: Record<string, unknown> = {}, path = bank) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("POST", `${path}/anomaly/intelligence`, { json })
  })

const unitWithText = (text: string, path = bank) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const list = yield* server.request("GET", `${path}/memories/list?limit=100`)
    const unit = list.body.items.find((item: any) => item.text === text)
    assert.isDefined(unit, `no memory "${text}" in ${list.text}`)
    return unit
  })

const contradictionsOf = (events: ReadonlyArray<any>, ids: ReadonlyArray<string>) =>
  events.filter((event) => event.anomaly_type === "contradiction" && ids.some((id) => event.unit_ids.includes(id)))

layer(testApp({}, undefined, models), { excludeTestServices: true, timeout: "2 minutes" })("anomalies", (it) => {
  it.effect("a newer contradicting fact supersedes the older one, with the correction recorded", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain([{ content: "Alice works at Acme.", timestamp: "2024-01-10T09:00:00Z" }, ...background])
      yield* retain([{ content: "Alice no longer works at Acme.", timestamp: "2024-06-01T09:00:00Z" }])
      const older = yield* unitWithText("Alice works at Acme.")
      const newer = yield* unitWithText("Alice no longer works at Acme.")

      const report = yield* intelligence()
      assert.strictEqual(report.status, 200, report.text)
      const [event, ...others] = contradictionsOf(report.body.events, [older.id])
      assert.strictEqual(others.length, 0, report.text)
      assert.sameMembers(event.unit_ids, [older.id, newer.id])
      assert.strictEqual(event.status, "resolved")
      assert.strictEqual(event.resolved_by, "auto")
      assert.isAtLeast(event.severity, 0.7)
      const [correction] = event.corrections
      assert.strictEqual(correction.correction_type, "confidence_adjustment")
      assert.strictEqual(correction.target_unit_id, older.id)
      assert.strictEqual(correction.applied_by, "auto")
      assert.strictEqual(correction.before_state.confidence_score, 1)
      assert.strictEqual(correction.after_state.superseded_by, newer.id)
      assert.isBelow(correction.after_state.confidence_score, 1)
      assert.closeTo(correction.confidence_delta, correction.after_state.confidence_score - 1, 1e-4)
      assert.strictEqual(report.body.total_events_in_response, report.body.events.length)
      assert.strictEqual(report.body.summary.total_events, report.body.events.length)
      assert.strictEqual(report.body.summary.by_type.contradiction, 1)

      // The older fact is history, not gone: still listed and readable, marked with its replacement.
      assert.strictEqual(older.superseded_by, newer.id)
      assert.closeTo(older.confidence, correction.after_state.confidence_score, 1e-4)
      const fetched = yield* server.request("GET", `${bank}/memories/${older.id}`)
      assert.strictEqual(fetched.body.superseded_by, newer.id)
      assert.isNull(newer.superseded_by)
    }))

  it.effect("recall ranks the current fact above the one it replaced, and reflect says which replaced which", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const recalled = yield* server.request("POST", `${bank}/memories/recall`, {
        json: { query: "Where does Alice work?" }
      })
      assert.strictEqual(recalled.status, 200, recalled.text)
      const texts = recalled.body.results.map((result: any) => result.text)
      assert.strictEqual(texts[0], "Alice no longer works at Acme.", recalled.text)
      const superseded = recalled.body.results.find((result: any) => result.text === "Alice works at Acme.")
      assert.isDefined(superseded, recalled.text)
      assert.strictEqual(superseded.superseded_by, recalled.body.results[0].id)

      const reflected = yield* server.request("POST", `${bank}/reflect`, { json: { query: "Where does Alice work?" } })
      assert.strictEqual(reflected.status, 200, reflected.text)
      assert.include(reflected.body.text, "\"Alice works at Acme.\" was replaced by", reflected.body.text)
      assert.include(reflected.body.text, "Alice no longer works at Acme.")
    }))

  it.effect("acknowledge, resolve and suppress answer the updated event; an unknown event is 404", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const [event] = (yield* intelligence({ anomaly_types: ["contradiction"] })).body.events
      const acknowledged = yield* server.request("POST", `${bank}/anomaly/events/${event.id}/acknowledge`, {
        json: { note: "checked with Alice" }
      })
      assert.strictEqual(acknowledged.status, 200, acknowledged.text)
      assert.strictEqual(acknowledged.body.status, "acknowledged")
      assert.strictEqual(acknowledged.body.note, "checked with Alice")
      assert.isNull(acknowledged.body.resolved_at)
      assert.strictEqual(acknowledged.body.corrections.length, 1)

      const resolved = yield* server.request("POST", `${bank}/anomaly/events/${event.id}/resolve`, { json: {} })
      assert.strictEqual(resolved.body.status, "resolved")
      assert.strictEqual(resolved.body.resolved_by, "user")
      assert.isString(resolved.body.resolved_at)
      const filtered = yield* intelligence({ status: "resolved", min_severity: 0.5 })
      assert.includeMembers(filtered.body.events.map((e: any) => e.id), [event.id])
      assert.deepStrictEqual(
        (yield* intelligence({ status: "open", anomaly_types: ["contradiction"] })).body.events,
        []
      )

      const missing = yield* server.request("POST", `${bank}/anomaly/events/no-such-event/suppress`, { json: {} })
      assert.strictEqual(missing.status, 404, missing.text)
      assert.include(missing.body.detail, "no-such-event")
      const noBank = yield* server.request("POST", "/v1/default/banks/never-made/anomaly/intelligence", { json: {} })
      assert.strictEqual(noBank.status, 404, noBank.text)
    }))

  it.effect("a suppressed pair of statements is never reported again; an unsuppressed one is", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const news = {
        content: "Bob no longer lives in Paris.",
        document_id: "bob-news",
        timestamp: "2024-07-01T09:00:00Z"
      }
      yield* retain([{ content: "Bob lives in Paris.", timestamp: "2024-02-01T09:00:00Z" }])
      const home = yield* unitWithText("Bob lives in Paris.")
      // The same statement stored again under a new unit id: deleting its document and retaining it again.
      const restate = Effect.gen(function*() {
        const deleted = yield* server.request("DELETE", `${bank}/documents/bob-news`)
        assert.strictEqual(deleted.status, 200, deleted.text)
        // Its replacement gone, the older fact is current again, at the confidence it had before.
        const current = yield* unitWithText("Bob lives in Paris.")
        assert.isNull(current.superseded_by)
        assert.strictEqual(current.confidence, 1)
        yield* retain([news])
      })
      yield* retain([news])
      const demoted = yield* unitWithText("Bob lives in Paris.")
      assert.isBelow(demoted.confidence, 1)
      yield* restate
      // The deleted statement's event went with it (a delete reaches everything derived); the restated one is new.
      const reported = contradictionsOf((yield* intelligence({ limit: 200 })).body.events, [home.id])
      assert.strictEqual(reported.length, 1, "detected again for the restated fact")

      const suppressed = yield* server.request("POST", `${bank}/anomaly/events/${reported[0].id}/suppress`)
      assert.strictEqual(suppressed.status, 200, suppressed.text)
      assert.strictEqual(suppressed.body.status, "suppressed")
      yield* restate
      // The suppression outlived the delete of the statement it names; the restated pair is not reported again.
      const after = contradictionsOf((yield* intelligence({ limit: 200 })).body.events, [home.id])
      assert.deepStrictEqual(after.map((event: { status: string }) => event.status), ["suppressed"])
      // Not reported, so not corrected either: the user said these two do not conflict.
      assert.isNull((yield* unitWithText("Bob lives in Paris.")).superseded_by)
    }))

  it.effect("bad filters are 400 naming the field", () =>
    Effect.gen(function*() {
      for (
        const [json, field] of [
          [{ limit: 0 }, "limit"],
          [{ limit: 201 }, "limit"],
          [{ min_severity: -1 }, "min_severity"],
          [{ min_severity: 2 }, "min_severity"],
          [{ status: "closed" }, "status"],
          [{ anomaly_types: ["gossip"] }, "anomaly_types"]
        ] as const
      ) {
        const response = yield* intelligence(json)
        assert.strictEqual(response.status, 400, `${JSON.stringify(json)}: ${response.text}`)
        assert.include(response.body.detail, field)
      }
    }))
})

layer(testApp({ anomalyDetection: false }, undefined, models), { excludeTestServices: true, timeout: "2 minutes" })(
  "anomaly detection off",
  (it) => {
    it.effect("SERVICE_API_ANOMALY_DETECTION=false reports nothing and supersedes nothing", () =>
      Effect.gen(function*() {
        const path = "/v1/default/banks/quiet"
        yield* retain([{ content: "Alice works at Acme.", timestamp: "2024-01-10T09:00:00Z" }], path)
        yield* retain([{ content: "Alice no longer works at Acme.", timestamp: "2024-06-01T09:00:00Z" }], path)
        const report = yield* intelligence({}, path)
        assert.strictEqual(report.status, 200, report.text)
        assert.strictEqual(report.body.summary.total_events, 0)
        assert.isNull((yield* unitWithText("Alice works at Acme.", path)).superseded_by)
      }))
  }
)
