/**
 * Body caps over the real HTTP server (issue 33): with an API key on, a 25 MB body of 5M strings without the key is
 * refused 401 before anything reads it; with the key, a body past the byte cap answers 413 (declared or chunked), a
 * deep one 400 naming the depth, a wide one 413 naming the elements, each before it is parsed; a legitimate
 * 10k-item retain batch still goes through; /health answers within 100 ms while each hostile body is in flight
 * (or within twice a quiet /health of the same moment; on a machine loaded beyond its cores the latency is logged,
 * not enforced: `healthBudgetMs`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { bodyFile, sendFromChild } from "../support/ChildSender.ts"
import { healthBudgetMs, withHealthTimed } from "../support/fuzz/FuzzRun.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const key = "k-body-caps-0123456789"
const auth = { authorization: `Bearer ${key}` }
const maxRequestBytes = 32 * 1024 * 1024
const app = testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)), maxRequestBytes })
const retainPath = "/v1/default/banks/caps/memories"

/**
 * 5M two-letter strings: 25 MB, five times the element cap. The hostile bodies are written to files once and sent
 * from a child process (`ChildSender`): sent from this process, the client's own writing and buffers would share the
 * server's event loop and show in /health as if the server had stalled.
 */
const wide = Buffer.from(`[${`"ab",`.repeat(5_000_000 - 1)}"ab"]`)
const deep = Buffer.from(`{"items":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)
const oversized = Buffer.from(`{"items":[{"content":"${"x".repeat(maxRequestBytes)}"}]}`)
const files = {
  wide: bodyFile("wide", wide),
  deep: bodyFile("deep", deep),
  oversized: bodyFile("oversized", oversized)
}

/** Sends a hostile body from a child process (see above). */
const sendHostile = (
  url: string,
  file: string,
  headers: Record<string, string>,
  mode: "declared" | "chunked" = "declared"
) =>
  Effect.promise(() => sendFromChild(url + retainPath, file, { "content-type": "application/json", ...headers }, mode))

interface Sent {
  readonly status: number
  readonly body: any
  readonly ms: number
}

const send = (
  url: string,
  body: Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string>,
  init: Partial<RequestInit> = {}
) =>
  Effect.promise(async (): Promise<Sent> => {
    const started = performance.now()
    const response = await fetch(url + retainPath, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
      ...init
    })
    const text = await response.text()
    return {
      status: response.status,
      body: text === "" ? undefined : JSON.parse(text),
      ms: performance.now() - started
    }
  })

/** Runs `during` while /health is asked back to back; its result, the slowest /health and the budget for it. */
const withHealthProbe = <A>(url: string, during: Effect.Effect<A>, target = 100) =>
  Effect.promise(async () => {
    const budget = await healthBudgetMs(url, target)
    const { result, slowestHealthMs } = await withHealthTimed(url, () => Effect.runPromise(during))
    console.log(`slowest /health ${slowestHealthMs.toFixed(0)} ms (budget ${budget} ms)`)
    return { result, healthMax: slowestHealthMs, budget }
  })

layer(app, { excludeTestServices: true })("body caps", (it) => {
  it.effect("a 25 MB body of 5M strings without the key answers 401 at once: the key is checked before any scan", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { result, healthMax, budget } = yield* withHealthProbe(server.url, sendHostile(server.url, files.wide, {}))
      // Scanned first, it would have answered 413 (5M elements are past the cap); parsed first, it took seconds.
      assert.strictEqual(result.status, 401)
      assert.include(result.body.detail, "API key")
      assert.isBelow(result.ms, 2_000, "answered while the body was still arriving, or just after")
      assert.isBelow(healthMax, budget, "/health stayed responsive")
    }))

  it.effect("with the key, the same wide body answers 413 naming the element cap", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { result, healthMax, budget } = yield* withHealthProbe(
        server.url,
        sendHostile(server.url, files.wide, auth)
      )
      assert.strictEqual(result.status, 413)
      assert.deepStrictEqual(result.body.errors, [{
        field: "body",
        location: "body",
        message: "has more than 1000000 elements (values and keys) (SERVICE_API_MAX_BODY_ELEMENTS)"
      }])
      assert.include(result.body.detail, "elements")
      assert.isBelow(healthMax, budget, "/health stayed responsive")
    }))

  it.effect("a body nested 100k deep answers 400 naming the depth cap", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const { result, healthMax, budget } = yield* withHealthProbe(
        server.url,
        sendHostile(server.url, files.deep, auth)
      )
      assert.strictEqual(result.status, 400)
      assert.strictEqual(result.body.errors[0].field, "body")
      assert.strictEqual(
        result.body.errors[0].message,
        "is nested more than 64 levels deep (SERVICE_API_MAX_BODY_DEPTH)"
      )
      assert.isBelow(healthMax, budget, "/health stayed responsive")
    }))

  it.effect("a body past the byte cap answers 413, whether its length is declared or it comes chunked", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const declared = yield* withHealthProbe(server.url, sendHostile(server.url, files.oversized, auth))
      assert.strictEqual(declared.result.status, 413)
      assert.include(declared.result.body.errors[0].message, "SERVICE_API_MAX_REQUEST_BYTES")
      assert.isBelow(declared.healthMax, declared.budget, "/health stayed responsive")

      const streamed = yield* withHealthProbe(server.url, sendHostile(server.url, files.oversized, auth, "chunked"))
      assert.strictEqual(streamed.result.status, 413)
      assert.include(streamed.result.body.errors[0].message, "SERVICE_API_MAX_REQUEST_BYTES")
    }))

  it.effect("a 10k-item retain batch (multi-line text, tags, metadata, a NUL to clean) is accepted whole", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const items = Array.from({ length: 10_000 }, (_, i) => ({
        content: `Item ${i}: the ferry left at ${i % 24}:00.\nIt carried ${i % 90} cars.`,
        context: i === 0 ? "from a PDF\u0000" : "log",
        tags: ["ferry", `day-${i % 7}`],
        metadata: { source: "harbour", line: String(i) },
        document_id: `doc-${i}`
      }))
      const body = Buffer.from(JSON.stringify({ items, async: true }))
      const { result, healthMax, budget } = yield* withHealthProbe(server.url, send(server.url, body, auth), 250)
      assert.strictEqual(result.status, 200, JSON.stringify(result.body))
      assert.strictEqual(result.body.items_count, 10_000)
      assert.isBelow(healthMax, budget, "/health answered while a legitimate large batch was read and decoded")
    }))

  it.effect("an identifier with a control character deep in a large body is still refused, naming its path", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const items = Array.from({ length: 2_000 }, (_, i) => ({ content: `line ${i}`, document_id: `doc-${i}` }))
      items[1_234] = { content: "x", document_id: "doc\u0000evil" }
      const result = yield* send(server.url, Buffer.from(JSON.stringify({ items })), auth)
      assert.strictEqual(result.status, 400)
      assert.strictEqual(result.body.errors[0].field, "items.1234.document_id")
    }))
})
