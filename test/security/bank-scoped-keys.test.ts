/**
 * Keys scoped to banks (SERVICE_API_TENANT_API_KEYS): a key reaches only its banks, on REST and MCP alike. It cannot
 * list, read or write other banks, reach their chunks by id, clone them into repos or see their repos, or use the
 * admin routes; the single SERVICE_API_TENANT_API_KEY keeps reaching every bank.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { connectMcp, rawMcpPost } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const adminKey = "k-admin-0123456789"
const aliceKey = "k-alice-0123456789"
const bobKey = "k-bob-0123456789ab"

const app = testApp({
  tenantExtension: "api_key",
  tenantApiKey: Option.some(Redacted.make(adminKey)),
  tenantApiKeys: [
    { key: Redacted.make(aliceKey), banks: ["alice", "alice-*"] },
    { key: Redacted.make(bobKey), banks: ["bob"] }
  ]
})

const as = (key: string) => ({ authorization: `Bearer ${key}` })
const bank = (id: string) => `/v1/default/banks/${id}`

layer(app, { excludeTestServices: true })("bank-scoped API keys", (it) => {
  it.effect("REST: a key reads and writes its banks, gets 403 on others, and lists only its own", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const call = (key: string, method: string, path: string, json?: unknown) =>
        server.request(method, path, { headers: as(key), ...(json === undefined ? {} : { json }) })
      assert.strictEqual((yield* call(bobKey, "PUT", bank("bob"), { name: "Bob" })).status, 200)
      assert.strictEqual(
        (yield* call(bobKey, "POST", `${bank("bob")}/memories`, { items: [{ content: "Bob's locker code is 4512." }] }))
          .status,
        200
      )
      assert.strictEqual((yield* call(aliceKey, "PUT", bank("alice-notes"), { name: "Notes" })).status, 200)

      for (
        const [method, path, json] of [
          ["GET", bank("bob"), undefined],
          ["PUT", bank("bob"), { name: "Mine now" }],
          ["DELETE", bank("bob"), undefined],
          ["GET", `${bank("bob")}/memories/list`, undefined],
          ["POST", `${bank("bob")}/memories/recall`, { query: "locker code" }],
          ["POST", `${bank("bob")}/memories`, { items: [{ content: "planted" }] }],
          ["POST", `${bank("bob")}/reflect`, { query: "what is the locker code?" }],
          ["GET", `${bank("alicex")}/memories/list`, undefined],
          ["GET", `${bank(encodeURIComponent("bob"))}/stats`, undefined]
        ] as const
      ) {
        const refused = yield* call(aliceKey, method, path, json)
        assert.strictEqual(refused.status, 403, `${method} ${path}`)
        assert.include(refused.body.detail, "does not reach bank")
      }
      const listed = yield* call(bobKey, "GET", `${bank("bob")}/memories/list`)
      assert.deepStrictEqual(listed.body.items.map((item: any) => item.text), ["Bob's locker code is 4512."])

      const ids = (key: string) =>
        Effect.map(
          call(key, "GET", "/v1/default/banks"),
          (response) => response.body.banks.map((entry: any) => entry.bank_id).sort()
        )
      assert.deepStrictEqual(yield* ids(aliceKey), ["alice-notes"])
      assert.deepStrictEqual(yield* ids(bobKey), ["bob"])
      assert.deepStrictEqual(yield* ids(adminKey), ["alice-notes", "bob"])

      // Admin routes and metrics need a key that reaches every bank.
      assert.strictEqual((yield* call(aliceKey, "POST", "/v1/admin/consolidate/public")).status, 403)
      assert.strictEqual((yield* call(aliceKey, "GET", "/metrics")).status, 403)
      assert.strictEqual((yield* call(adminKey, "GET", "/metrics")).status, 200)
      assert.strictEqual((yield* call("k-nobody-0123456789", "GET", bank("alice-notes"))).status, 401)
    }))

  it.effect("a chunk of another bank is answered as missing, like one that does not exist", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("bob")}/memories`, {
        headers: as(bobKey),
        json: { items: [{ content: "Bob keeps the spare key under the blue flowerpot." }] }
      })
      const listed = yield* server.request("GET", `${bank("bob")}/memories/list`, { headers: as(bobKey) })
      const chunkId = listed.body.items.find((item: any) => item.text.includes("flowerpot"))?.chunk_id
      assert.isString(chunkId)
      const own = yield* server.request("GET", `/v1/default/chunks/${chunkId}`, { headers: as(bobKey) })
      assert.strictEqual(own.status, 200)
      const foreign = yield* server.request("GET", `/v1/default/chunks/${chunkId}`, { headers: as(aliceKey) })
      const missing = yield* server.request("GET", "/v1/default/chunks/no-such-chunk", { headers: as(aliceKey) })
      assert.strictEqual(foreign.status, 404)
      assert.strictEqual(missing.status, 404)
      assert.notInclude(foreign.text, "flowerpot")
    }))

  it.effect("repos: no cloning other banks, no repos on them, and other banks' repos are invisible", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const call = (key: string, method: string, path: string, json?: unknown) =>
        server.request(method, path, { headers: as(key), ...(json === undefined ? {} : { json }) })
      yield* call(bobKey, "PUT", bank("bob"), { name: "Bob" })
      const clone = yield* call(aliceKey, "POST", "/v1/default/repos", { bank_id: "alice-copy", source_bank_id: "bob" })
      assert.strictEqual(clone.status, 403)
      assert.include(clone.body.detail, "source_bank_id")
      assert.strictEqual((yield* call(adminKey, "GET", bank("alice-copy"))).status, 404)
      assert.strictEqual((yield* call(aliceKey, "POST", "/v1/default/repos", { bank_id: "bob" })).status, 403)

      const bobRepo = yield* call(bobKey, "POST", "/v1/default/repos", { bank_id: "bob" })
      assert.strictEqual(bobRepo.status, 200)
      const repoId = bobRepo.body.repo_id
      const aliceRepo = yield* call(aliceKey, "POST", "/v1/default/repos", { bank_id: "alice-work" })
      assert.strictEqual(aliceRepo.status, 200)

      const listed = yield* call(aliceKey, "GET", "/v1/default/repos")
      assert.deepStrictEqual(listed.body.repos.map((repo: any) => repo.root_bank_id), ["alice-work"])
      for (const path of ["", "/branches", "/log", "/status"]) {
        assert.strictEqual((yield* call(aliceKey, "GET", `/v1/default/repos/${repoId}${path}`)).status, 404, path)
      }
      const commit = yield* call(aliceKey, "POST", `/v1/default/repos/${repoId}/commit`, { message: "mine" })
      assert.strictEqual(commit.status, 404)
      const fork = yield* call(aliceKey, "POST", `/v1/default/repos/${aliceRepo.body.repo_id}/fork-bank`, {
        target_bank_id: "bob-2"
      })
      assert.strictEqual(fork.status, 403)
      assert.include(fork.body.detail, "target_bank_id")
      assert.strictEqual((yield* call(bobKey, "GET", `/v1/default/repos/${repoId}`)).status, 200)
    }))

  it.effect("MCP: a bank outside the key is refused at the URL, the header and in every tool call", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("bob")}/memories`, {
        headers: as(bobKey),
        json: { items: [{ content: "Bob's bike lock combination is 0815." }] }
      })
      assert.strictEqual((yield* rawMcpPost(`${server.url}/mcp/bob/`, as(aliceKey))).status, 403)
      assert.strictEqual((yield* rawMcpPost(`${server.url}/mcp/`, { ...as(aliceKey), "x-bank-id": "bob" })).status, 403)
      assert.strictEqual((yield* rawMcpPost(`${server.url}/mcp/bob/`, as(bobKey))).status, 200)

      const mcp = yield* connectMcp(`${server.url}/mcp/`, { ...as(aliceKey), "x-bank-id": "alice" })
      yield* mcp.ok("retain", { content: "Alice waters the ferns on Sundays." })
      const refused = yield* mcp.fails("recall", { query: "bike lock", bank_id: "bob" })
      assert.include(JSON.stringify(refused), "does not reach bank")
      assert.notInclude(JSON.stringify(refused), "0815")
      yield* mcp.fails("retain", { content: "planted", bank_id: "bob" })
      yield* mcp.fails("create_bank", { bank_id: "bobby" })
      const banks = yield* mcp.ok("list_banks", {})
      const listed = JSON.stringify(banks)
      assert.include(listed, "alice")
      assert.notInclude(listed, "\"bob\"")

      // A multi-bank endpoint whose default bank the key does not reach: calls without bank_id are refused too.
      const defaulted = yield* connectMcp(`${server.url}/mcp/`, as(aliceKey))
      yield* defaulted.fails("recall", { query: "anything" })
      const bobsList = yield* server.request("GET", `${bank("bob")}/memories/list`, { headers: as(bobKey) })
      assert.isFalse(bobsList.text.includes("planted"))
    })))
})

layer(testApp(), { excludeTestServices: true })("repo clones", (it) => {
  it.effect("POST /repos with source_bank_id refuses an existing bank instead of replacing its memories", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("kept")}/memories`, { json: { items: [{ content: "Kept is a bank." }] } })
      yield* server.request("POST", `${bank("source")}/memories`, { json: { items: [{ content: "From source." }] } })
      const refused = yield* server.request("POST", "/v1/default/repos", {
        json: { bank_id: "kept", source_bank_id: "source" }
      })
      assert.strictEqual(refused.status, 409)
      assert.include(refused.body.detail, "bank_id")
      const kept = yield* server.request("GET", `${bank("kept")}/memories/list`)
      assert.deepStrictEqual(kept.body.items.map((item: any) => item.text), ["Kept is a bank."])
      assert.strictEqual((yield* server.request("GET", `${bank("kept")}/repo`)).body.repo, null)
    }))
})
