/**
 * The web control plane in a real browser (Debian's Chromium via playwright-core) against the real server:
 * create a bank, retain, run the recall debugger, expand a graph node, cancel an operation, visit every page at
 * 1280×800 and on a phone-sized screen without console errors. Screenshots land in test-artifacts/ui.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Operations } from "../../src/bank/Operations.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/Eventually.ts"
import { TestTaskHandlers, TestTasks } from "../support/TestTasks.ts"
import { chromiumPath, ensureUiBuilt, openPage, skipReason, UiBrowser } from "./UiBrowser.ts"

const bank = "ui-bank"
const apiKey = "ui-browser-test-key"
const facts = [
  "Alice moved to Lisbon in May 2023 and works at Acme as a data engineer.",
  "Bob, Alice's brother, lives in Berlin and plays the cello in an orchestra.",
  "Alice and Bob went hiking in the Alps in August 2022.",
  "Acme opened a new office in Porto where Alice leads the analytics team.",
  "Carol is Alice's manager at Acme and prefers written status reports."
]

if (chromiumPath === undefined) console.warn(`test/ui/control-plane: skipped: ${skipReason}`)

const app = Layer.merge(testApp({}, TestTaskHandlers), UiBrowser.layer)

const pages = [
  "memories",
  "documents",
  "recall",
  "reflect",
  "graph",
  "operations",
  "settings",
  "mental-models",
  "directives",
  "webhooks",
  "llm-traces",
  "anomalies",
  "dreams",
  "brain",
  "codebases",
  "datasets",
  "repos"
]

/** Polls an operation until it leaves pending/running; fails the test if it did not complete. */
const waitForOperation = (server: TestServer["Service"], id: string) =>
  eventually(
    Effect.map(server.request("GET", `/v1/default/banks/${bank}/operations/${id}`), (response) => response.body.status),
    (status) => status !== "pending" && status !== "running",
    "60 seconds",
    { what: `operation ${id} finished`, interval: "100 millis" }
  ).pipe(Effect.map((status) => assert.strictEqual(status, "completed", `operation ${id} ended ${status}`)))

/**
 * The bank the pages show, holding the first fact: the first test creates it through the forms; a test run alone
 * creates it through the API, so every test can run without the ones before it.
 */
const uiBank = Effect.gen(function*() {
  yield* ensureUiBuilt
  const server = yield* TestServer
  if ((yield* server.request("GET", `/v1/default/banks/${bank}/config`)).status === 404) {
    const created = yield* server.request("PUT", `/v1/default/banks/${bank}`, { json: { name: "UI test bank" } })
    assert.strictEqual(created.status, 200, created.text)
    const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
      json: { items: [{ content: facts[0], tags: ["people", "ui"] }] }
    })
    assert.strictEqual(retained.status, 200, retained.text)
  }
  return server
})

describe.skipIf(chromiumPath === undefined)("web control plane in Chromium", () => {
  layer(app, { excludeTestServices: true, timeout: "120 seconds" })("control plane", (it) => {
    it.effect("creates a bank and retains a memory through the forms", () =>
      Effect.gen(function*() {
        yield* ensureUiBuilt
        const server = yield* TestServer
        const { page, errors, screenshot } = yield* openPage()
        yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/`)
          await page.getByText("No bank yet").waitFor()
          await page.getByLabel("Bank id").fill(bank)
          await page.getByLabel("Name").fill("UI test bank")
          await page.getByLabel("Mission").fill("Remember what the team says about people and places.")
          await page.getByRole("button", { name: "Create bank" }).click()
          await page.waitForURL(`**/ui/banks/${bank}/memories`)
          await page.getByLabel("Content").fill(facts[0]!)
          await page.getByLabel("Tags (comma-separated)").fill("people, ui")
          await page.getByRole("button", { name: "Retain", exact: true }).click()
          await page.getByText(/Retained: \d+ memories created/).waitFor()
          await page.getByRole("button", { name: /Lisbon/ }).first().waitFor()
          await screenshot("memories")
        })
        const stored = yield* server.request("GET", `/v1/default/banks/${bank}/memories/list`)
        assert.isTrue(stored.body.items.some((m: any) => m.text.includes("Lisbon") && m.tags.includes("ui")))
        const created = yield* server.request("GET", "/v1/default/banks")
        assert.isTrue(created.body.banks.some((b: any) => b.bank_id === bank && b.name === "UI test bank"))
        assert.deepStrictEqual(errors, [])
      }))

    it.effect("settings change the bank's disposition and mission; a memory opens with its history and links", () =>
      Effect.gen(function*() {
        const server = yield* uiBank
        const { page, errors } = yield* openPage()
        yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/${bank}/settings`)
          await page.getByLabel("Retain mission").fill("Keep facts about people, places and employers.")
          await page.getByLabel("skepticism").fill("5")
          await page.getByRole("button", { name: "Save settings" }).click()
          await page.getByText("Saved.").waitFor()
          await page.goto(`${server.url}/ui/banks/${bank}/memories`)
          await page.getByRole("button", { name: /Lisbon/ }).first().click()
          const detail = page.getByRole("region", { name: "Memory detail" })
          await detail.getByRole("heading", { name: "History" }).waitFor()
          await detail.getByRole("heading", { name: "Links" }).waitFor()
          await detail.getByText("No change recorded.").waitFor()
        })
        const config = yield* server.request("GET", `/v1/default/banks/${bank}/config`)
        assert.strictEqual(config.body.config.retain_mission, "Keep facts about people, places and employers.")
        assert.strictEqual(config.body.config.disposition.skepticism, 5)
        assert.deepStrictEqual(errors, [])
      }))

    it.effect("the recall debugger shows each strategy's candidates, the fused ranking and stage timings", () =>
      Effect.gen(function*() {
        const server = yield* uiBank
        yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
          json: { items: facts.slice(1).map((content) => ({ content })) }
        })
        const query = "Where does Alice work?"
        const api = yield* server.request("POST", `/v1/default/banks/${bank}/memories/recall`, {
          json: { query, trace: true }
        })
        const { page, errors, screenshot } = yield* openPage()
        const shown = yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/${bank}/recall`)
          await page.getByLabel("Query", { exact: true }).fill(query)
          await page.getByRole("button", { name: "Run recall" }).click()
          await page.getByRole("region", { name: "Fused ranking" }).waitFor()
          const counts: Record<string, number> = {}
          for (const name of Object.keys(api.body.trace.strategies)) {
            counts[name] = await page.getByRole("region", { name: `Strategy ${name}` }).locator("tbody tr").count()
          }
          const fused = await page.getByRole("region", { name: "Fused ranking" }).locator("tbody tr").count()
          const stages = await page.getByRole("region", { name: "Stage timings" }).locator("li").allTextContents()
          await page.getByText("Acme", { exact: false }).first().waitFor()
          await screenshot("recall-debugger")
          return { counts, fused, stages }
        })
        assert.isAbove(api.body.trace.strategies.semantic.candidates.length, 0)
        for (const [name, run] of Object.entries<any>(api.body.trace.strategies)) {
          assert.strictEqual(shown.counts[name], run.candidates.length, `candidates of ${name}`)
        }
        assert.strictEqual(shown.fused, api.body.trace.fusion.length)
        assert.isTrue(shown.stages.some((line) => line.startsWith("search")))
        assert.deepStrictEqual(errors, [])
      }))

    it.effect("the graph expands a node's neighbourhood on click and opens its panel", () =>
      Effect.gen(function*() {
        const server = yield* uiBank
        const { page, errors, screenshot } = yield* openPage()
        const result = yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/${bank}/graph`)
          const nodeButtons = page.locator("[data-node-id]")
          await nodeButtons.first().waitFor()
          const target = (await nodeButtons.first().getAttribute("data-node-id"))!
          const expansion = page.waitForResponse((r) =>
            r.url().includes("/graph/neighborhood") && r.url().includes(`focus_ids=${target}`)
          )
          await nodeButtons.first().click()
          const body = await (await expansion).json()
          await page.getByRole("region", { name: "Node panel" }).getByText(/Links \(\d+\)/).waitFor()
          const listed = await nodeButtons.evaluateAll((buttons) => buttons.map((b) => b.getAttribute("data-node-id")))
          await page.locator(".graph-canvas canvas").last().waitFor()
          await screenshot("graph")
          return { target, body, listed }
        })
        assert.include(result.body.focus_ids, result.target)
        for (const node of result.body.nodes) assert.include(result.listed, node.id)
        assert.deepStrictEqual(errors, [])
      }))

    it.effect("an operation in progress is cancelled from the operations page", () =>
      Effect.gen(function*() {
        const server = yield* uiBank
        const operations = yield* Operations
        const op = yield* operations.submit({
          bankId: bank,
          taskType: "test_block",
          payload: { key: "ui-cancel" },
          itemsCount: 1
        })
        const { page, errors, screenshot } = yield* openPage()
        yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/${bank}/operations`)
          const cancel = page.getByRole("button", { name: `Cancel operation ${op.id}` })
          await cancel.waitFor()
          await cancel.click()
          await page.locator(`[data-status="cancelled"]`).first().waitFor()
          await page.getByRole("button", { name: `Retry operation ${op.id}` }).waitFor()
          await screenshot("operations")
        })
        const status = yield* server.request("GET", `/v1/default/banks/${bank}/operations/${op.id}`)
        assert.strictEqual(status.body.status, "cancelled")
        TestTasks.blockers.delete("ui-cancel")
        assert.deepStrictEqual(errors, [])
      }))

    it.effect("a codebase is reviewed: chunks routed to memory, then approved into memory", () =>
      Effect.gen(function*() {
        const server = yield* uiBank
        const imported = yield* Effect.promise(async () => {
          const form = new FormData()
          form.append(
            "file",
            new Blob(["export const discount = (total: number) => total > 100 ? total * 0.9 : total\n"]),
            "pricing.ts"
          )
          form.append("request", JSON.stringify({ name: "pricing" }))
          const response = await fetch(`${server.url}/v1/default/banks/${bank}/codebases/import/file`, {
            method: "POST",
            body: form
          })
          return response.json() as Promise<any>
        })
        yield* waitForOperation(server, imported.operation_id)
        const { page, errors, screenshot } = yield* openPage()
        const approval = yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/${bank}/codebases`)
          await page.getByRole("button", { name: "Review pricing" }).click()
          await page.getByRole("checkbox", { name: /Pick .*discount/ }).check()
          await page.getByRole("button", { name: "Route 1 to memory" }).click()
          await page.getByText("1 chunk(s) routed to memory.").waitFor()
          await page.getByRole("button", { name: "Approve into memory" }).click()
          const queued = page.getByText(/Approval queued as operation/)
          await queued.waitFor()
          await screenshot("codebase-review")
          return /operation (\S+):/.exec((await queued.textContent()) ?? "")?.[1] ?? ""
        })
        const chunks = yield* server.request(
          "GET",
          `/v1/default/banks/${bank}/codebases/${imported.codebase_id}/chunks?route_target=memory`
        )
        assert.isTrue(
          chunks.body.items.some((chunk: any) => chunk.label.includes("discount")),
          JSON.stringify(chunks.body)
        )
        yield* waitForOperation(server, approval)
        const stored = yield* server.request("GET", `/v1/default/banks/${bank}/memories/list?q=discount`)
        assert.isTrue(
          stored.body.items.some((memory: any) => memory.text.includes("discount")),
          JSON.stringify(stored.body)
        )
        assert.deepStrictEqual(errors, [])
      }))

    it.effect(
      "every page renders without console errors at 1280×800 and on a narrow screen",
      () =>
        Effect.gen(function*() {
          const server = yield* uiBank
          for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
            const { page, errors, screenshot } = yield* openPage(viewport)
            yield* Effect.promise(async () => {
              for (const name of pages) {
                await page.goto(`${server.url}/ui/banks/${bank}/${name}`)
                await page.locator("main h1").waitFor()
                await page.waitForLoadState("networkidle")
                const width = await page.evaluate<number>("document.documentElement.scrollWidth")
                if (width > viewport.width + 1) errors.push(`${name}: page is ${width}px wide at ${viewport.width}px`)
                await screenshot(`${viewport.width}-${name}`)
              }
            })
            assert.deepStrictEqual(errors, [], `at ${viewport.width}px`)
          }
        }),
      { timeout: 240_000 }
    )

    it.effect("API errors are shown with the API's detail", () =>
      Effect.gen(function*() {
        yield* ensureUiBuilt
        const server = yield* TestServer
        const { page } = yield* openPage()
        const text = yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/banks/no-such-bank/settings`)
          return page.getByRole("alert").first().textContent()
        })
        const api = yield* server.request("GET", "/v1/default/banks/no-such-bank/config")
        assert.strictEqual(api.status, 404)
        assert.include(text ?? "", api.body.detail)
      }))
  })

  const keyed = Layer.merge(
    testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(apiKey)) }),
    UiBrowser.layer
  )

  layer(keyed, { excludeTestServices: true, timeout: "120 seconds" })("control plane with an API key", (it) => {
    it.effect("asks for the key, keeps it for the tab and sends it as a bearer token", () =>
      Effect.gen(function*() {
        yield* ensureUiBuilt
        const server = yield* TestServer
        yield* server.request("PUT", "/v1/default/banks/keyed-bank", {
          json: {},
          headers: { authorization: `Bearer ${apiKey}` }
        })
        const { page } = yield* openPage()
        const stored = yield* Effect.promise(async () => {
          await page.goto(`${server.url}/ui/`)
          const dialog = page.getByRole("dialog", { name: "API key required" })
          await dialog.waitFor()
          await dialog.getByLabel("API key").fill(apiKey)
          await dialog.getByRole("button", { name: "Use key" }).click()
          await page.getByRole("link", { name: "keyed-bank" }).waitFor()
          return page.evaluate<string | null>("sessionStorage.getItem('engram.apiKey')")
        })
        assert.strictEqual(stored, apiKey)
      }))
  })
})
