/**
 * OpenTelemetry trace export: the real server, configured through the OTEL_* variables, sends its spans to a
 * loopback OTLP/HTTP receiver. A retain and a recall over REST, a recall over MCP and an asynchronous retain
 * each become a trace rooted at the request's server span, with the retain stages, recall strategies, model
 * calls and SQL statements beneath it; the background run links back to the request that queued it. Nothing
 * a user stored, and no key, is ever exported.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option, Redacted } from "effect"
import * as EmbeddingsLive from "../../layers/models/embeddings/EmbeddingsLive.ts"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import * as LlmLive from "../../layers/models/llm/LlmLive.ts"
import { TracingLive, tracingSettings } from "../../layers/observability/TracingLive.ts"
import { connectMcp } from "../support/McpClient.ts"
import type { OtlpReceiver, ReceivedSpan } from "../support/OtlpReceiver.ts"
import { otlpReceiver } from "../support/OtlpReceiver.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { Scripted, scriptedServer } from "../support/ScriptedLlm.ts"

class Receiver extends Context.Service<Receiver, OtlpReceiver>()("test/observability/otlp/Receiver") {}

/** Text that must never leave the service in a span: the stored content, the model's answer and the key. */
const marker = "vault-code-ZX81-do-not-export"
const apiKey = "sk-otel-test-7c1f9e2b-secret"

const settingsFrom = (env: Record<string, string>) =>
  tracingSettings.pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env))))

const models = Layer.unwrap(Effect.gen(function*() {
  const server = yield* Scripted
  const llm = llmSettings({ provider: "openai", baseUrl: server.baseUrl, model: "extractor", apiKey, maxRetries: 0 })
  return Layer.mergeAll(
    EmbeddingsLive.openai({
      baseUrl: server.baseUrl,
      apiKey: Redacted.make(apiKey),
      model: "embedder",
      dimensions: 16
    }),
    LlmLive.layerWith(llm)
  )
}))

/** Trace export exactly as `npm start` builds it, from OTEL_* variables naming the loopback receiver. */
const tracing = Layer.unwrap(Effect.gen(function*() {
  const receiver = yield* Receiver
  return TracingLive.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_HEADERS: "x-collector-token=t0ken%20one",
    OTEL_SERVICE_NAME: "engram-under-test",
    OTEL_BSP_SCHEDULE_DELAY: "50"
  }))))
}))

const app = testApp({}, undefined, models).pipe(
  Layer.provide(tracing),
  Layer.provideMerge(Layer.mergeAll(scriptedServer, Layer.effect(Receiver, otlpReceiver)))
)

const bank = "/v1/default/banks/traced"

const extraction = JSON.stringify({
  facts: [
    { text: `The office vault code is ${marker}.`, type: "world", entities: [{ name: "office vault", type: "thing" }] },
    { text: "Ines changes the vault code every March.", type: "world", entities: [{ name: "Ines", type: "person" }] }
  ]
})

/** The spans of one trace, and whether one span sits (at any depth) beneath another. */
const traceOf = (spans: ReadonlyArray<ReceivedSpan>, root: ReceivedSpan) => {
  const members = spans.filter((span) => span.traceId === root.traceId)
  const byId = new Map(members.map((span) => [span.spanId, span]))
  const beneath = (span: ReceivedSpan): boolean => {
    for (let parent = byId.get(span.parentSpanId); parent !== undefined; parent = byId.get(parent.parentSpanId)) {
      if (parent.spanId === root.spanId) return true
    }
    return false
  }
  return {
    named: (name: string) => members.filter((span) => span.name === name && beneath(span)),
    all: members.filter(beneath)
  }
}

const serverSpan = 2

describe("trace settings", () => {
  it.effect("are off unless an endpoint is set, and follow the OpenTelemetry variables", () =>
    Effect.gen(function*() {
      assert.isTrue(Option.isNone(yield* settingsFrom({})))
      assert.isTrue(
        Option.isNone(yield* settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }))
      )
      assert.isTrue(
        Option.isNone(
          yield* settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" })
        )
      )

      const base = Option.getOrThrow(yield* settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }))
      assert.strictEqual(base.url, "http://collector:4318/v1/traces")
      assert.strictEqual(base.protocol, "http/protobuf")
      assert.strictEqual(base.serviceName, "engram")

      const specific = Option.getOrThrow(
        yield* settingsFrom({
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://vendor.example/otlp/traces",
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc,x-team=memory",
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json"
        })
      )
      assert.strictEqual(specific.url, "https://vendor.example/otlp/traces")
      assert.deepStrictEqual(specific.headers, { authorization: "Bearer abc", "x-team": "memory" })
      assert.strictEqual(specific.protocol, "http/json")

      const grpc = yield* Effect.flip(
        settingsFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })
      )
      assert.include(grpc.message, "http/protobuf")
    }))
})

layer(app, { excludeTestServices: true })("OTLP trace export", (it) => {
  it.effect("a retain and a recall are traces rooted at their requests, with stages, strategies and model calls", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      const receiver = yield* Receiver
      scripted.setFallback({ content: extraction, usage: { prompt_tokens: 321, completion_tokens: 54 } })

      const retained = yield* server.request("POST", `${bank}/memories`, {
        json: { items: [{ content: `Note to self: the office vault code is ${marker}. Ines changes it every March.` }] }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      const recalled = yield* server.request("POST", `${bank}/memories/recall`, {
        json: { query: "Who changes the vault code?" }
      })
      assert.strictEqual(recalled.status, 200, recalled.text)
      assert.isAbove(recalled.body.results.length, 0)
      // A search text in the query string is redacted from the request span's URL.
      const listed = yield* server.request("GET", `${bank}/memories/list?q=${marker}`)
      assert.strictEqual(listed.status, 200, listed.text)
      // The key really was in use, so its absence from the spans below means something.
      assert.strictEqual(scripted.chatRequests()[0]?.headers["authorization"], `Bearer ${apiKey}`)

      const requestSpan = (name: string) => (spans: ReadonlyArray<ReceivedSpan>) =>
        spans.find((span) => span.name === name && span.kind === serverSpan && span.parentSpanId === "")
      const retainName = "POST /v1/default/banks/{bank_id}/memories"
      const recallName = "POST /v1/default/banks/{bank_id}/memories/recall"
      const listName = "GET /v1/default/banks/{bank_id}/memories/list"
      const spans = yield* eventually(
        Effect.sync(() => receiver.spans()),
        (spans) => [retainName, recallName, listName].every((name) => requestSpan(name)(spans) !== undefined)
      )

      const retain = traceOf(spans, requestSpan(retainName)(spans)!)
      for (const stage of ["Retain.process", "Retain.extract", "Retain.embed", "Retain.write"]) {
        assert.isAbove(retain.named(stage).length, 0, `${stage} under the retain request`)
      }
      const llmCall = retain.named("Llm.request")[0]!
      assert.strictEqual(llmCall.attributes["gen_ai.provider.name"], "openai")
      assert.strictEqual(llmCall.attributes["gen_ai.request.model"], "extractor")
      assert.strictEqual(llmCall.attributes["gen_ai.usage.input_tokens"], 321)
      assert.strictEqual(llmCall.attributes["gen_ai.usage.output_tokens"], 54)
      const batch = retain.named("Embeddings.embedDocuments")[0]!
      assert.strictEqual(batch.attributes["gen_ai.request.model"], "embedder")
      assert.strictEqual(batch.attributes["engram.embeddings.texts"], 2)
      const statements = retain.all.filter((span) => typeof span.attributes["db.query.text"] === "string")
      assert.isTrue(
        statements.some((span) => String(span.attributes["db.query.text"]).includes("INSERT INTO memory_units"))
      )

      const recall = traceOf(spans, requestSpan(recallName)(spans)!)
      assert.isAbove(recall.named("Recall.recall").length, 0)
      for (const strategy of ["semantic", "keyword", "graph"]) {
        const span = recall.named(`Recall.strategy.${strategy}`)[0]
        assert.isDefined(span, `the ${strategy} strategy under the recall request`)
        assert.isNumber(span!.attributes["engram.recall.candidates"])
      }
      assert.strictEqual(recall.named("Embeddings.embedQuery")[0]?.attributes["engram.embeddings.texts"], 1)
      assert.isAbove(recall.all.filter((span) => span.attributes["db.query.text"] !== undefined).length, 0)

      // What the collector receives: the service's name, the configured headers, and none of the secrets.
      assert.strictEqual(spans[0]!.resource["service.name"], "engram-under-test")
      assert.strictEqual(receiver.exports[0]!.headers["x-collector-token"], "t0ken one")
      for (const received of receiver.exports) {
        assert.notInclude(received.raw, marker)
        assert.notInclude(received.raw, "ZX81")
        assert.notInclude(received.raw, apiKey)
        assert.notInclude(received.raw, "Who changes the vault code")
      }
    }))

  it.effect("an MCP tool call is a child of its request's span", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* Receiver
      // A bank of its own: the test runs alone, without the retain of the test before.
      assert.strictEqual((yield* server.request("PUT", "/v1/default/banks/traced-mcp", { json: {} })).status, 200)
      const mcp = yield* connectMcp(`${server.url}/mcp/`)
      yield* mcp.ok("recall", { bank_id: "traced-mcp", query: "What changes every March?" })

      const spans = yield* eventually(
        Effect.sync(() => receiver.spans()),
        (spans) => spans.some((span) => span.name === "McpTool.recall")
      )
      const tool = spans.find((span) => span.name === "McpTool.recall")!
      const request = spans.find((span) =>
        span.traceId === tool.traceId && span.kind === serverSpan && span.name === "POST /mcp/"
      )
      assert.isDefined(request, "the tool call's trace is rooted at the MCP request")
      assert.isAbove(traceOf(spans, request!).named("McpTool.recall").length, 0)
      assert.isAbove(traceOf(spans, request!).named("Recall.strategy.semantic").length, 0)
    }))

  it.effect("a background retain is its own trace, linked to the request that queued it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* Receiver
      const queued = yield* server.request("POST", `${bank}/memories`, {
        json: { items: [{ content: "The loading dock closes at six on Fridays." }], async: true }
      })
      assert.strictEqual(queued.status, 200, queued.text)
      const operationId: string = queued.body.operation_id
      yield* eventually(
        server.request("GET", `${bank}/operations/${operationId}`),
        (response) => response.body.status === "completed"
      )

      const spans = yield* eventually(
        Effect.sync(() => receiver.spans()),
        (spans) => spans.some((span) => span.attributes["engram.operation.id"] === operationId)
      )
      const run = spans.find((span) => span.attributes["engram.operation.id"] === operationId)!
      assert.strictEqual(run.name, "Operation.batch_retain")
      assert.strictEqual(run.parentSpanId, "")
      assert.strictEqual(run.links.length, 1)
      const queuer = spans.find((span) => span.spanId === run.links[0]!.spanId)
      assert.isDefined(queuer, "the linked span was exported")
      const request = spans.find((span) => span.traceId === queuer!.traceId && span.parentSpanId === "")
      assert.strictEqual(request?.name, "POST /v1/default/banks/{bank_id}/memories")
      assert.notStrictEqual(run.traceId, request!.traceId)
      assert.isAbove(traceOf(spans, run).named("Retain.write").length, 0, "the run's stages are beneath its span")
    }))
})
