/**
 * Which bank an MCP call works in — the URL path, then `X-Bank-Id`, then SERVICE_MCP_BANK_ID (a multi-bank call's
 * own `bank_id` first) — and that MCP and REST are one store: a retain through either is recalled through the other.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectMcp, rawMcpPost } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const memoriesOf = (bank: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const listed = yield* server.request("GET", `/v1/default/banks/${bank}/memories/list`)
    return listed.status === 200 ? listed.body.items.map((item: any) => item.text as string) : []
  })

layer(testApp({ mcpDefaultBankId: "fallback-bank" }), { excludeTestServices: true })("mcp bank resolution", (it) => {
  it.effect("a retain through MCP is recalled through REST, and a REST retain is recalled through MCP", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/shared/`)
      yield* mcp.ok("retain", { content: "Ingrid keeps the spare office key in the blue drawer." })
      const viaRest = yield* server.request("POST", "/v1/default/banks/shared/memories/recall", {
        json: { query: "Where is the spare office key?" }
      })
      assert.strictEqual(viaRest.status, 200, viaRest.text)
      assert.include(viaRest.body.results[0].text, "blue drawer")

      const stored = yield* server.request("POST", "/v1/default/banks/shared/memories", {
        json: { items: [{ content: "The quarterly review moved to the Oslo office." }] }
      })
      assert.strictEqual(stored.status, 200, stored.text)
      const viaMcp = yield* mcp.ok("recall", { query: "Where is the quarterly review?" })
      assert.include(viaMcp.results[0].text, "Oslo")
    })))

  it.effect("the URL path wins over X-Bank-Id; on /mcp/ the bank_id argument wins over the header", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const single = yield* connectMcp(`${server.url}/mcp/path-bank`, { "x-bank-id": "header-bank" })
      yield* single.ok("retain", { content: "Retained on the single-bank endpoint." })
      assert.include(yield* single.fails("retain", { content: "x", bank_id: "other" }), "bank_id: unknown argument")

      const multi = yield* connectMcp(`${server.url}/mcp/`, { "X-Bank-Id": "header-bank" })
      yield* multi.ok("retain", { content: "Retained with the X-Bank-Id header." })
      yield* multi.ok("retain", { content: "Retained with an explicit bank_id.", bank_id: "argument-bank" })

      assert.deepStrictEqual(yield* memoriesOf("path-bank"), ["Retained on the single-bank endpoint."])
      assert.deepStrictEqual(yield* memoriesOf("header-bank"), ["Retained with the X-Bank-Id header."])
      assert.deepStrictEqual(yield* memoriesOf("argument-bank"), ["Retained with an explicit bank_id."])
    })))

  it.effect("without a path, header or argument, calls go to SERVICE_MCP_BANK_ID", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp`)
      yield* mcp.ok("retain", { content: "Retained in the configured default bank." })
      assert.deepStrictEqual(yield* memoriesOf("fallback-bank"), ["Retained in the configured default bank."])
      assert.strictEqual((yield* mcp.ok("get_bank")).bank_id, "fallback-bank")
    })))

  it.effect("an unknown bank is a tool error that says how to create it; a malformed bank id is a 400", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const single = yield* connectMcp(`${server.url}/mcp/not-yet/`)
      const unknown = yield* single.fails("get_bank")
      assert.include(unknown, "bank 'not-yet' not found: a first retain or update_bank creates it")
      assert.include(yield* single.fails("recall", { query: "anything" }), "not found")
      yield* single.ok("update_bank", { name: "Now it exists" })
      assert.strictEqual((yield* single.ok("get_bank")).name, "Now it exists")

      const badPath = yield* rawMcpPost(`${server.url}/mcp/bad%20bank/`, {})
      assert.strictEqual(badPath.status, 400)
      assert.include(badPath.body.detail, "bank_id")
      const badHeader = yield* rawMcpPost(`${server.url}/mcp/`, { "x-bank-id": "no spaces allowed" })
      assert.strictEqual(badHeader.status, 400)
      assert.include(badHeader.body.detail, "X-Bank-Id")
    })))
})
