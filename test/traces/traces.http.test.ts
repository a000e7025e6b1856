/**
 * LLM traces over HTTP: calls made through `Llm` (against the scripted model server) are listed with their
 * outcome and usage, filters and paging work, statistics buckets add up, and bad parameters or unknown banks
 * get JSON errors. A trace that cannot be written never fails the call.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import { Llm } from "../../src/models/Llm.ts"
import type { NewLlmTrace } from "../../src/traces/LlmTraceStore.ts"
import { LlmTraceStore } from "../../src/traces/LlmTraceStore.ts"
import { TestServer } from "../support/TestServer.ts"
import { Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const models = scriptedModels((server) =>
  llmSettings({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "trace-model",
    retryBase: "5 millis"
  })
)

// The app provides what `LlmLive` needs (SQL for traces, the HTTP client); `Scripted` comes from outside.
const app = scriptedApp({}, models)

const traces = (bank: string, query = "") => `/v1/default/banks/${bank}/llm-requests${query}`

const call = (bankId: string, scope: string, operationId?: string) =>
  Effect.gen(function*() {
    const llm = yield* Llm
    return yield* llm.generateText({
      purpose: "retain",
      scope,
      bankId,
      operationId,
      messages: [{ role: "user", content: `prompt for ${scope}` }]
    })
  })

const withStore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provide(effect, LlmTraceStore.layer)

const usageFor = (operationId: string) =>
  withStore(Effect.gen(function*() {
    const store = yield* LlmTraceStore
    return yield* store.usageForOperation(operationId)
  }))

const hoursAgo = (hours: number) => Effect.map(Clock.currentTimeMillis, (now) => new Date(now - hours * 3_600_000))

const trace = (bankId: string, createdAt: Date, overrides: Partial<NewLlmTrace> = {}): NewLlmTrace => ({
  bankId,
  operationId: undefined,
  purpose: "reflect",
  scope: "reflect.answer",
  provider: "openai",
  model: "m",
  status: "success",
  errorReason: undefined,
  errorMessage: undefined,
  attempt: 1,
  durationMs: 100,
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  input: "q",
  output: "a",
  createdAt,
  ...overrides
})

layer(app, { excludeTestServices: true })("llm traces", (it) => {
  it.effect("every call made for a bank is listed, newest first, with outcome, usage and bounded texts", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const model = yield* Scripted
      yield* server.request("PUT", "/v1/default/banks/tr-a", { json: {} })
      model.script(
        { content: "first answer", usage: { prompt_tokens: 11, completion_tokens: 3 } },
        { status: 500 },
        { content: "second answer", usage: { prompt_tokens: 20, completion_tokens: 6 } }
      )
      yield* call("tr-a", "retain.extract_facts", "op-1")
      yield* call("tr-a", "retain.summarize", "op-2")

      const list = yield* server.request("GET", traces("tr-a"))
      assert.strictEqual(list.status, 200)
      assert.strictEqual(list.body.total, 3)
      assert.strictEqual(list.body.limit, 100)
      assert.strictEqual(list.body.offset, 0)
      const [newest, failed, oldest] = list.body.items
      assert.strictEqual(list.body.bank_id, "tr-a")
      assert.deepStrictEqual(Object.keys(newest).sort(), [
        "attempt",
        "bank_id",
        "cached_tokens",
        "created_at",
        "duration_ms",
        "ended_at",
        "error",
        "error_reason",
        "id",
        "input",
        "input_tokens",
        "llm_info",
        "metadata",
        "model",
        "operation",
        "operation_id",
        "output",
        "output_tokens",
        "parent_span_id",
        "provider",
        "purpose",
        "scope",
        "span_id",
        "started_at",
        "status",
        "total_tokens",
        "trace_id"
      ])
      // The names Hindsight clients read: the purpose as operation, the operation as trace, the call as span.
      assert.include(newest, {
        operation: "retain",
        trace_id: "op-2",
        span_id: newest.id,
        parent_span_id: null,
        cached_tokens: null
      })
      assert.strictEqual(newest.started_at, newest.created_at)
      assert.strictEqual(Date.parse(newest.ended_at) - Date.parse(newest.started_at), newest.duration_ms)
      assert.deepStrictEqual(newest.llm_info, { provider: "openai", model: "trace-model", attempt: 2 })
      assert.include(newest, {
        bank_id: "tr-a",
        operation_id: "op-2",
        purpose: "retain",
        scope: "retain.summarize",
        provider: "openai",
        model: "trace-model",
        status: "success",
        attempt: 2,
        input_tokens: 20,
        output_tokens: 6,
        total_tokens: 26,
        output: "second answer",
        error: null
      })
      assert.include(newest.input, "prompt for retain.summarize")
      assert.include(failed, { status: "error", error_reason: "provider", attempt: 1, total_tokens: 0, output: null })
      assert.include(failed.error, "500")
      assert.include(oldest, { scope: "retain.extract_facts", operation_id: "op-1", total_tokens: 14 })
      assert.isTrue(Date.parse(newest.created_at) >= Date.parse(oldest.created_at))

      const usage = yield* usageFor("op-2")
      assert.deepStrictEqual(usage, { calls: 2, inputTokens: 20, outputTokens: 6, totalTokens: 26 })
    }))

  it.effect("filters by scope, status, operation and purpose; pages with limit and offset", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/tr-b", { json: {} })
      yield* withStore(Effect.gen(function*() {
        const store = yield* LlmTraceStore
        const now = yield* hoursAgo(0)
        for (let i = 0; i < 5; i++) {
          const scope = { scope: "retain.extract_facts", purpose: "retain", operationId: "op-b" } as const
          yield* store.record(trace("tr-b", yield* hoursAgo(i), scope))
        }
        yield* store.record(trace("tr-b", now, { status: "error", errorReason: "timeout", errorMessage: "too slow" }))
        yield* store.record(
          trace("tr-b", now, { purpose: "consolidation", scope: "consolidation.merge", input: "x".repeat(40_000) })
        )
      }))

      const byScope = yield* server.request("GET", traces("tr-b", "?scope=retain.extract_facts"))
      assert.strictEqual(byScope.body.total, 5)
      const byStatus = yield* server.request("GET", traces("tr-b", "?status=error"))
      assert.deepStrictEqual(byStatus.body.items.map((item: any) => item.error), ["too slow"])
      const byOperation = yield* server.request("GET", traces("tr-b", "?operation_id=op-b&limit=2&offset=1"))
      assert.strictEqual(byOperation.body.total, 5)
      assert.strictEqual(byOperation.body.items.length, 2)
      assert.deepStrictEqual([byOperation.body.limit, byOperation.body.offset], [2, 1])
      const all = yield* server.request("GET", traces("tr-b", "?operation_id=op-b"))
      assert.deepStrictEqual(
        byOperation.body.items.map((item: any) => item.id),
        all.body.items.slice(1, 3).map((item: any) => item.id)
      )
      const byPurpose = yield* server.request("GET", traces("tr-b", "?purpose=consolidation"))
      assert.strictEqual(byPurpose.body.total, 1)
      const input: string = byPurpose.body.items[0].input
      assert.isBelow(input.length, 16_100)
      assert.include(input, "24000 characters omitted")
      // Hindsight clients filter by the same two under their names.
      const byHindsightNames = yield* server.request("GET", traces("tr-b", "?operation=consolidation"))
      assert.deepStrictEqual(
        byHindsightNames.body.items.map((item: any) => item.id),
        byPurpose.body.items.map((item: any) => item.id)
      )
      assert.strictEqual((yield* server.request("GET", traces("tr-b", "?trace_id=op-b"))).body.total, 5)
      const beyond = yield* server.request("GET", traces("tr-b", "?offset=50"))
      assert.deepStrictEqual([beyond.body.items.length, beyond.body.total], [0, 7])
    }))

  it.effect("statistics bucket the period and their counts and tokens add up", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/tr-c", { json: {} })
      yield* withStore(Effect.gen(function*() {
        const store = yield* LlmTraceStore
        const now = yield* hoursAgo(0)
        const twoHoursAgo = yield* hoursAgo(2)
        for (const durationMs of [100, 200, 300]) yield* store.record(trace("tr-c", twoHoursAgo, { durationMs }))
        yield* store.record(
          trace("tr-c", now, { status: "error", usage: { inputTokens: 7, outputTokens: 0, totalTokens: 7 } })
        )
        yield* store.record(trace("tr-c", now, { durationMs: 500 }))
        yield* store.record(trace("tr-c", yield* hoursAgo(30)))
      }))

      const hourly = yield* server.request("GET", "/v1/default/banks/tr-c/llm-requests/stats")
      assert.strictEqual(hourly.status, 200)
      assert.include(hourly.body, { bank_id: "tr-c", period: "24h", trunc: "hour" })
      assert.strictEqual(hourly.body.items.length, 2)
      const [earlier, latest] = hourly.body.items
      assert.strictEqual(new Date(earlier.time).getUTCMinutes(), 0)
      assert.deepStrictEqual([earlier.total, earlier.statuses], [3, { success: 3, error: 0 }])
      assert.deepStrictEqual(earlier.tokens, { input: 30, output: 15, cached: 0, total: 45 })
      assert.deepStrictEqual([earlier.duration_ms.avg, earlier.duration_ms.p50, earlier.duration_ms.max], [
        200,
        200,
        300
      ])
      assert.closeTo(earlier.duration_ms.p95, 290, 0.001)
      assert.deepStrictEqual([latest.total, latest.statuses], [2, { success: 1, error: 1 }])
      assert.deepStrictEqual(latest.tokens, { input: 17, output: 5, cached: 0, total: 22 })
      // Hindsight clients read the same buckets as `buckets`, with the window's start.
      assert.deepStrictEqual(hourly.body.buckets, hourly.body.items)
      assert.isTrue(Date.parse(hourly.body.start) < Date.parse(earlier.time) + 3_600_000)
      const week = yield* server.request("GET", "/v1/default/banks/tr-c/llm-requests/stats?period=7d")
      assert.include(week.body, { period: "7d", trunc: "day" })
      assert.strictEqual(week.body.items.reduce((total: number, item: any) => total + item.total, 0), 6)

      const daily = yield* server.request("GET", "/v1/default/banks/tr-c/llm-requests/stats?period_hours=48&trunc=day")
      assert.include(daily.body, { period: "48h", trunc: "day" })
      const sum = (field: (item: any) => number) =>
        daily.body.items.reduce((total: number, item: any) => total + field(item), 0)
      assert.strictEqual(sum((item) => item.total), 6)
      assert.strictEqual(sum((item) => item.statuses.error), 1)
      assert.strictEqual(sum((item) => item.tokens.total), 82)
      for (const item of daily.body.items) assert.match(item.time, /T00:00:00\.000Z$/)

      const empty = yield* server.request(
        "GET",
        "/v1/default/banks/tr-c/llm-requests/stats?period_hours=1&trunc=minute"
      )
      assert.strictEqual(empty.body.items.length, 1)
    }))

  it.effect("bad parameters are 400s naming the field; unknown banks are 404s", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/tr-d", { json: {} })
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["/v1/default/banks/tr-d/llm-requests?limit=0", "limit"],
        ["/v1/default/banks/tr-d/llm-requests?limit=501", "limit"],
        ["/v1/default/banks/tr-d/llm-requests?offset=-1", "offset"],
        ["/v1/default/banks/tr-d/llm-requests?status=maybe", "status"],
        ["/v1/default/banks/tr-d/llm-requests/stats?period_hours=0", "period_hours"],
        ["/v1/default/banks/tr-d/llm-requests/stats?period_hours=2161", "period_hours"],
        ["/v1/default/banks/tr-d/llm-requests/stats?trunc=week", "trunc"]
      ]
      for (const [path, field] of cases) {
        const response = yield* server.request("GET", path)
        assert.strictEqual(response.status, 400, path)
        assert.include(response.body.errors.map((error: any) => error.field), field, path)
        assert.include(response.body.detail, field)
      }
      const edges = yield* server.request("GET", "/v1/default/banks/tr-d/llm-requests?limit=500")
      assert.strictEqual(edges.status, 200)
      const longest = yield* server.request("GET", "/v1/default/banks/tr-d/llm-requests/stats?period_hours=2160")
      assert.strictEqual(longest.status, 200)
      for (const path of [traces("tr-missing"), `${traces("tr-missing")}/stats`]) {
        const missing = yield* server.request("GET", path)
        assert.strictEqual(missing.status, 404)
        assert.include(missing.body.detail, "tr-missing")
      }
    }))

  it.effect("a trace that cannot be written does not fail the call; deleting the bank removes its traces", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const model = yield* Scripted
      model.script({ content: "answered anyway" })
      // No such bank: the trace insert violates its foreign key, and the call still succeeds.
      const result = yield* call("tr-never-created", "reflect.answer", "op-e0")
      assert.strictEqual(result.text, "answered anyway")

      yield* server.request("PUT", "/v1/default/banks/tr-e", { json: {} })
      model.script({ content: "kept" })
      yield* call("tr-e", "reflect.answer", "op-e")
      assert.strictEqual((yield* usageFor("op-e")).calls, 1)
      yield* server.request("DELETE", "/v1/default/banks/tr-e")
      assert.strictEqual((yield* usageFor("op-e")).calls, 0)
    }))
})
