/**
 * Internet research against a fake web on loopback (search APIs and pages) and the scripted OpenAI-compatible
 * model: the answer comes from the pages read and cites them, the bank is never read or written, page fetching
 * keeps to its limits (bytes, time, redirects, content types, private addresses), the search key goes only to
 * the provider, and an unconfigured service says what to set.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import dnsPromises from "node:dns/promises"
import { syncBuiltinESMExports } from "node:module"
import { FetchHttpClient, HttpClient } from "effect/http"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import { FileConverter } from "../../src/files/FileConverter.ts"
import { isPublicAddress } from "../../src/research/NetworkGuard.ts"
import { fetchPage } from "../../src/research/PageFetcher.ts"
import { defaultResearchSettings, type ResearchSettings } from "../../src/research/ResearchSettings.ts"
import { makeWebSearch } from "../../src/research/WebSearch.ts"
import type { FakeWeb as FakeWebShape } from "../support/FakeWeb.ts"
import { fakeWeb } from "../support/FakeWeb.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { Scripted, scriptedModels, scriptedServer } from "../support/ScriptedLlm.ts"

class Web extends Context.Service<Web, FakeWebShape>()("test/http/research/Web") {}
const research = (bankId: string) => `/v1/default/banks/${bankId}/internet/research`
const maxPageBytes = 256 * 1024

const settingsFor = (web: FakeWebShape, overrides: Partial<ResearchSettings>): ResearchSettings => ({
  ...defaultResearchSettings,
  allowPrivateNetworks: true,
  maxPageBytes,
  fetchTimeout: Duration.millis(1500),
  searchTimeout: Duration.seconds(5),
  ...overrides,
  baseUrl: Option.map(overrides.baseUrl ?? Option.none(), (path) => `${web.origin}${path}`)
})

const promptOf = (body: any): string => (body?.messages ?? []).map((message: any) => message.content).join("\n")
const fetches = (trace: any) => trace.tool_calls.filter((call: any) => call.tool === "fetch_page")

const models = scriptedModels((server) =>
  llmSettings({ provider: "openai", baseUrl: server.baseUrl, model: "scripted", maxRetries: 0, timeout: "5 seconds" })
)

const withLlm = Layer.unwrap(Effect.gen(function*() {
  const web = yield* Web
  return testApp(
    { research: settingsFor(web, { provider: "searxng", baseUrl: Option.some("/searxng") }) },
    undefined,
    models
  )
})).pipe(Layer.provideMerge(scriptedServer), Layer.provideMerge(Layer.effect(Web, fakeWeb)))

layer(withLlm, { excludeTestServices: true })("internet research with SearXNG and a language model", (it) => {
  it.effect("answers from the pages it read, citing them, and never reads or writes the bank", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const web = yield* Web
      const scripted = yield* Scripted
      yield* server.request("PUT", "/v1/default/banks/rs-answer", { json: {} })
      web.setResults([
        { title: "Green tea and caffeine", url: "/pages/tea.html", snippet: "How much caffeine is in green tea" },
        { title: "Field notes", url: "/pages/notes.txt", snippet: "oolong notes" },
        { title: "Moved article", url: "/pages/moved", snippet: "the same tea article, moved" },
        { title: "A tea cup", url: "/pages/image.png", snippet: "Photo of a cup of sencha on a wooden table." }
      ])
      scripted.setFallback({
        content: "A cup of green tea has about 28 mg of caffeine [1].",
        usage: { prompt_tokens: 900, completion_tokens: 14 }
      })
      const modelCallsBefore = scripted.chatRequests().length
      const response = yield* server.request("POST", research("rs-answer"), {
        json: { query: "How much caffeine is in green tea?", budget: "high", include: { tool_calls: {} } }
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.strictEqual(response.body.text, "A cup of green tea has about 28 mg of caffeine [1].")
      assert.strictEqual(response.body.writes_to_bank, false)
      assert.deepStrictEqual(response.body.usage, { input_tokens: 900, output_tokens: 14, total_tokens: 914 })
      // The redirect lands on the tea page, already a source: [n] stays aligned with source_urls.
      assert.deepStrictEqual(response.body.source_urls, [
        `${web.origin}/pages/tea.html`,
        `${web.origin}/pages/notes.txt`,
        `${web.origin}/pages/image.png`
      ])

      const calls = scripted.chatRequests().slice(modelCallsBefore)
      assert.strictEqual(calls.length, 1)
      const prompt = promptOf(calls[0]!.body)
      assert.include(prompt, "How much caffeine is in green tea?")
      assert.include(prompt, "28 milligrams of caffeine")
      assert.include(prompt, "oolong tea sits between green and black tea")
      assert.include(prompt, "kind=\"search snippet\"")
      assert.include(prompt, "Photo of a cup of sencha")
      assert.notInclude(prompt, "secretTracking")
      assert.notInclude(prompt, "color: red")
      assert.include(prompt.toLowerCase(), "untrusted")

      const [search, ...rest] = response.body.trace.tool_calls
      assert.strictEqual(search.tool, "web_search")
      assert.strictEqual(search.input.provider, "searxng")
      assert.strictEqual(search.output.results.length, 4)
      const byUrl = new Map(rest.map((call: any) => [call.input.url, call.output]))
      assert.strictEqual((byUrl.get(`${web.origin}/pages/moved`) as any).final_url, `${web.origin}/pages/tea.html`)
      assert.deepStrictEqual(byUrl.get(`${web.origin}/pages/image.png`), {
        read: false,
        reason: "image/png is not read"
      })
      assert.deepStrictEqual(response.body.trace.llm_calls.map((call: any) => call.scope), ["research.answer"])

      const stats = yield* server.request("GET", "/v1/default/banks/rs-answer/stats")
      assert.strictEqual(stats.body.total_nodes, 0)
      const memories = yield* server.request("GET", "/v1/default/banks/rs-answer/memories/list")
      assert.strictEqual(memories.body.total, 0)
      const operations = yield* server.request("GET", "/v1/default/banks/rs-answer/operations")
      assert.strictEqual(operations.body.operations.length, 0)
    }))

  it.effect("page fetching keeps to its limits: bytes, time and redirects", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const web = yield* Web
      const scripted = yield* Scripted
      yield* server.request("PUT", "/v1/default/banks/rs-limits", { json: {} })
      web.setResults([
        { title: "Rooibos", url: "/pages/big.html", snippet: "rooibos" },
        { title: "Slow", url: "/pages/slow.html", snippet: "a slow page" },
        { title: "Loop", url: "/pages/loop", snippet: "a page that redirects forever" }
      ])
      scripted.setFallback({ content: "Rooibos is caffeine free [1]." })
      const response = yield* server.request("POST", research("rs-limits"), {
        json: { query: "Is rooibos caffeine free?", include: { tool_calls: { output: true } } }
      })
      assert.strictEqual(response.status, 200, response.text)
      const [big, slow, loop] = fetches(response.body.trace)
      assert.strictEqual(big.output.read, true)
      assert.strictEqual(big.output.truncated, true)
      assert.strictEqual(big.output.bytes, maxPageBytes)
      // The slow page never answers: only the 1.5 s fetch limit can have ended its read.
      assert.strictEqual(slow.output.read, false)
      assert.strictEqual(slow.output.reason, "no answer within 1s 500ms")
      assert.deepStrictEqual(loop.output, { read: false, reason: "more than 5 redirects" })
      // The rest of the 8 MB page was never downloaded: the reader hung up.
      yield* eventually(Effect.sync(() => web.bigPageAborted()), (aborted) => aborted)
    }))

  it.effect("the budget bounds the pages read; the trace appears only when asked for", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const web = yield* Web
      const scripted = yield* Scripted
      yield* server.request("PUT", "/v1/default/banks/rs-budget", { json: {} })
      web.setResults(Array.from({ length: 8 }, (_, index) => ({
        title: `Tea ${index}`,
        url: `/pages/tea.html?copy=${index}`,
        snippet: `tea ${index}`
      })))
      scripted.setFallback({ content: "About 28 mg [1]." })
      const pageRequests = () => web.requests.filter((request) => request.path === "/pages/tea.html").length
      const before = pageRequests()
      const low = yield* server.request("POST", research("rs-budget"), {
        json: { query: "green tea caffeine", budget: "low" }
      })
      assert.strictEqual(low.status, 200, low.text)
      assert.strictEqual(pageRequests() - before, 2)
      assert.strictEqual(low.body.source_urls.length, 2)
      assert.isNull(low.body.trace)

      const quiet = yield* server.request("POST", research("rs-budget"), {
        json: { query: "green tea caffeine", budget: "low", include: { tool_calls: { output: false } } }
      })
      assert.isTrue(quiet.body.trace.tool_calls.every((call: any) => call.output === null))
      const maxTokens = scripted.chatRequests().at(-1)!.body.max_tokens ??
        scripted.chatRequests().at(-1)!.body.max_completion_tokens
      assert.strictEqual(maxTokens, 4096)
    }))

  it.effect("bad input is a 400 naming the field; an unknown bank is a 404; a model outage is a 503", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const web = yield* Web
      const scripted = yield* Scripted
      yield* server.request("PUT", "/v1/default/banks/rs-errors", { json: {} })
      const empty = yield* server.request("POST", research("rs-errors"), { json: { query: "  " } })
      assert.strictEqual(empty.status, 400)
      assert.deepStrictEqual(empty.body.errors.map((error: any) => error.field), ["query"])
      const budget = yield* server.request("POST", research("rs-errors"), { json: { query: "tea", budget: "huge" } })
      assert.deepStrictEqual(budget.body.errors.map((error: any) => error.field), ["budget"])
      const unknown = yield* server.request("POST", research("rs-nobody"), { json: { query: "tea" } })
      assert.strictEqual(unknown.status, 404)
      assert.include(unknown.body.detail, "rs-nobody")

      web.setResults([{ title: "Tea", url: "/pages/tea.html", snippet: "tea" }])
      scripted.setFallback({ status: 500, body: { error: { message: "model on fire" } } })
      const outage = yield* server.request("POST", research("rs-errors"), { json: { query: "green tea caffeine" } })
      assert.strictEqual(outage.status, 503)
      assert.include(outage.body.detail, "language model failed during research")
    }))
})

const offlineBrave = Layer.unwrap(Effect.gen(function*() {
  const web = yield* Web
  return testApp({
    research: settingsFor(web, {
      provider: "brave",
      baseUrl: Option.some("/res/v1/web/search"),
      apiKey: Option.some(Redacted.make(web.apiKey))
    })
  })
})).pipe(Layer.provideMerge(Layer.effect(Web, fakeWeb)))

layer(offlineBrave, { excludeTestServices: true })(
  "internet research with Brave Search and no language model",
  (it) => {
    it.effect("answers with a labelled, cited extract; the key goes only to the search API", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const web = yield* Web
        yield* server.request("PUT", "/v1/default/banks/rs-offline", { json: {} })
        web.setResults([
          { title: "Field notes", url: "/pages/notes.txt", snippet: "notes" },
          { title: "Green tea and caffeine", url: "/pages/tea.html", snippet: "tea" }
        ])
        const response = yield* server.request("POST", research("rs-offline"), {
          json: { query: "How much caffeine does green tea contain?" }
        })
        assert.strictEqual(response.status, 200, response.text)
        assert.match(response.body.text, /^_No language model is configured/)
        assert.include(response.body.text, "about 28 milligrams of caffeine, roughly a third of a cup of coffee. [2]")
        assert.deepStrictEqual(response.body.source_urls, [
          `${web.origin}/pages/notes.txt`,
          `${web.origin}/pages/tea.html`
        ])
        assert.deepStrictEqual(response.body.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 })

        const searches = web.requests.filter((request) => request.path === "/res/v1/web/search")
        assert.strictEqual(searches.at(-1)!.headers["x-subscription-token"], web.apiKey)
        assert.strictEqual(searches.at(-1)!.query.get("q"), "How much caffeine does green tea contain?")
        const pages = web.requests.filter((request) => request.path.startsWith("/pages/"))
        assert.isAbove(pages.length, 0)
        for (const page of pages) assert.notInclude(JSON.stringify(page.headers), web.apiKey)
        assert.notInclude(response.text, web.apiKey)
      }))
  }
)

layer(testApp(), { excludeTestServices: true })("internet research not configured", (it) => {
  it.effect("is a 400 that says which setting to configure", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/rs-none", { json: {} })
      const response = yield* server.request("POST", research("rs-none"), { json: { query: "anything" } })
      assert.strictEqual(response.status, 400)
      assert.include(response.body.detail, "SERVICE_API_WEB_SEARCH_PROVIDER")
      assert.strictEqual(response.body.setting, "SERVICE_API_WEB_SEARCH_PROVIDER")
    }))
})

const parts = Layer.mergeAll(
  FileConverter.layer({ documents: { workers: 0 } }).pipe(Layer.provideMerge(FetchHttpClient.layer)),
  Layer.effect(Web, fakeWeb)
)

layer(parts)("research parts", (it) => {
  it.effect("Tavily and SearXNG results are read; a refused key is an upstream error that never shows the key", () =>
    Effect.gen(function*() {
      const web = yield* Web
      const client = yield* HttpClient.HttpClient
      web.setResults([{ title: "Tea", url: "/pages/tea.html", snippet: "<b>green</b> tea &amp; caffeine" }])
      const tavily = yield* makeWebSearch(
        settingsFor(web, {
          provider: "tavily",
          baseUrl: Option.some("/search"),
          apiKey: Option.some(Redacted.make(web.apiKey))
        }),
        client
      )
      const found = yield* tavily.search("green tea", 3)
      assert.deepStrictEqual(found, [{
        title: "Tea",
        url: `${web.origin}/pages/tea.html`,
        snippet: "green tea & caffeine"
      }])
      assert.strictEqual(web.requests.at(-1)!.headers["authorization"], `Bearer ${web.apiKey}`)
      assert.deepStrictEqual(JSON.parse(web.requests.at(-1)!.body).max_results, 3)

      const wrongKey = "wrong-key-that-must-not-leak"
      const brave = yield* makeWebSearch(
        settingsFor(web, {
          provider: "brave",
          baseUrl: Option.some("/res/v1/web/search"),
          apiKey: Option.some(Redacted.make(wrongKey))
        }),
        client
      )
      const refused = yield* Effect.flip(brave.search("green tea", 3))
      assert.strictEqual(refused._tag, "ResearchUpstreamError")
      assert.include(refused.detail, "refused the API key (HTTP 401)")
      assert.notInclude(refused.detail, wrongKey)

      const searxng = yield* makeWebSearch(
        settingsFor(web, { provider: "searxng", baseUrl: Option.some("/searxng") }),
        client
      )
      assert.strictEqual((yield* searxng.search("green tea", 5)).length, 1)
    }))

  it.effect("a provider without its key or address is not configured, and says which setting is missing", () =>
    Effect.gen(function*() {
      const web = yield* Web
      const client = yield* HttpClient.HttpClient
      const noKey = yield* Effect.flip(makeWebSearch(settingsFor(web, { provider: "brave" }), client))
      assert.strictEqual(noKey.setting, "SERVICE_API_WEB_SEARCH_API_KEY")
      const noAddress = yield* Effect.flip(makeWebSearch(settingsFor(web, { provider: "searxng" }), client))
      assert.strictEqual(noAddress.setting, "SERVICE_API_WEB_SEARCH_BASE_URL")
    }))

  it.effect("pages on private addresses are refused unless allowed; redirects into them too", () =>
    Effect.gen(function*() {
      const web = yield* Web
      const guarded = settingsFor(web, { allowPrivateNetworks: false })
      const direct = yield* fetchPage(guarded, `${web.origin}/pages/tea.html`)
      assert.deepStrictEqual(direct, {
        _tag: "PageFailure",
        url: `${web.origin}/pages/tea.html`,
        reason: "127.0.0.1 is not a public address"
      })
      const named = yield* fetchPage(guarded, `http://localhost:${new URL(web.origin).port}/pages/tea.html`)
      assert.strictEqual(named._tag, "PageFailure")
      const scheme = yield* fetchPage(guarded, "file:///etc/passwd")
      assert.deepStrictEqual(scheme, {
        _tag: "PageFailure",
        url: "file:///etc/passwd",
        reason: "only http and https pages are read"
      })
      const allowed = yield* fetchPage(settingsFor(web, {}), `${web.origin}/pages/tea.html`)
      assert.strictEqual(allowed._tag, "FetchedPage")

      for (
        const address of [
          "10.1.2.3",
          "127.0.0.1",
          "169.254.169.254",
          "192.168.1.1",
          "100.64.0.1",
          "::1",
          "fd00::1",
          "fe80::1",
          "::ffff:127.0.0.1"
        ]
      ) {
        assert.isFalse(isPublicAddress(address), address)
      }
      for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"]) {
        assert.isTrue(isPublicAddress(address), address)
      }
    }))

  it.effect("a name that resolves to a public address for the check and to loopback for the fetch is refused", () =>
    Effect.gen(function*() {
      const web = yield* Web
      const url = `http://localhost:${new URL(web.origin).port}/pages/tea.html`
      // DNS rebinding: the check's resolver answers with a public address, the connection's with loopback.
      const checkSays = (address: string) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            const original = dnsPromises.lookup
            dnsPromises.lookup = ((host: string, options: unknown) =>
              host === "localhost"
                ? Promise.resolve([{ address, family: 4 }])
                : original(host, options as never)) as never
            syncBuiltinESMExports()
            return original
          }),
          (original) =>
            Effect.sync(() => {
              dnsPromises.lookup = original
              syncBuiltinESMExports()
            })
        )
      const outcome = yield* Effect.scoped(Effect.andThen(
        checkSays("93.184.216.34"),
        fetchPage(settingsFor(web, { allowPrivateNetworks: false }), url)
      ))
      assert.strictEqual(outcome._tag, "PageFailure")
      assert.match(
        (outcome as { reason: string }).reason,
        /^localhost resolves to (127\.0\.0\.1|::1), not a public address$/
      )
      // Allowed, the same page is read through the same client.
      const allowed = yield* fetchPage(settingsFor(web, {}), url)
      assert.strictEqual(allowed._tag, "FetchedPage")
    }))
})
