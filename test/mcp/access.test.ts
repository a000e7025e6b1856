/**
 * Who may reach the MCP endpoint: the API key when the api_key tenant extension is on (401 otherwise), the
 * DNS-rebinding guard on Host and Origin (loopback names by default on a loopback bind, configurable), POST only,
 * and SERVICE_API_MCP_ENABLED=false removing the routes (404) and the `mcp` feature flag.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { connectMcp, rawMcpPost } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const key = "k-mcp-0123456789"
const portOf = (url: string) => new URL(url).port

layer(testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)) }), {
  excludeTestServices: true
})("mcp with the api_key extension", (it) => {
  it.effect("/mcp answers 401 JSON without the key or with a wrong one, and serves the tools with it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      for (const path of ["/mcp", "/mcp/", "/mcp/secured/"]) {
        const anonymous = yield* rawMcpPost(server.url + path, {})
        assert.strictEqual(anonymous.status, 401, path)
        assert.include(anonymous.body.detail, "API key")
        const wrong = yield* rawMcpPost(server.url + path, { authorization: "Bearer not-the-key" })
        assert.strictEqual(wrong.status, 401, path)
        assert.notInclude(JSON.stringify(wrong.body), key)
        const allowed = yield* rawMcpPost(server.url + path, { authorization: `Bearer ${key}` })
        assert.strictEqual(allowed.status, 200, path)
      }
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { authorization: `Bearer ${key}`, "x-bank-id": "secured" })
      assert.strictEqual((yield* mcp.tools).length, 42)
      yield* mcp.ok("retain", { content: "Keys are rotated every ninety days." })
      const listed = yield* server.request("GET", "/v1/default/banks/secured/memories/list", {
        headers: { authorization: `Bearer ${key}` }
      })
      assert.deepStrictEqual(listed.body.items.map((item: any) => item.text), ["Keys are rotated every ninety days."])
    })))
})

layer(testApp(), { excludeTestServices: true })("mcp on a loopback bind", (it) => {
  it.effect("only loopback Host names and loopback browser origins are served; other methods answer 405", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const port = portOf(server.url)
      const url = `${server.url}/mcp/`
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "localhost"]) {
        assert.strictEqual((yield* rawMcpPost(url, { host })).status, 200, host)
      }
      const rebound = yield* rawMcpPost(url, { host: `attacker.example:${port}` })
      assert.strictEqual(rebound.status, 403)
      assert.include(rebound.body.detail, "SERVICE_API_MCP_ALLOWED_HOSTS")
      assert.strictEqual((yield* rawMcpPost(`${server.url}/mcp/team/`, { host: "attacker.example" })).status, 403)

      assert.strictEqual((yield* rawMcpPost(url, { origin: "http://localhost:6274" })).status, 200)
      const foreign = yield* rawMcpPost(url, { origin: "https://attacker.example" })
      assert.strictEqual(foreign.status, 403)
      assert.include(foreign.body.detail, "SERVICE_API_MCP_ALLOWED_ORIGINS")
      assert.strictEqual((yield* rawMcpPost(url, { origin: "null" })).status, 403)

      const get = yield* server.request("GET", "/mcp/")
      assert.strictEqual(get.status, 405)
      assert.strictEqual(get.headers.get("allow"), "POST")
      assert.strictEqual((yield* server.request("DELETE", "/mcp/team")).status, 405)
      const version = yield* server.request("GET", "/version")
      assert.strictEqual(version.body.features.mcp, true)
    }))
})

layer(
  testApp({
    mcpAllowedHosts: Option.some(["mcp.example.com"]),
    mcpAllowedOrigins: Option.some(["https://app.example.com"])
  }),
  { excludeTestServices: true }
)("mcp with configured hosts and origins", (it) => {
  it.effect("the configured lists replace the loopback defaults", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const url = `${server.url}/mcp/`
      assert.strictEqual((yield* rawMcpPost(url, { host: "mcp.example.com" })).status, 200)
      assert.strictEqual((yield* rawMcpPost(url, { host: "MCP.example.com:443" })).status, 200)
      assert.strictEqual((yield* rawMcpPost(url, { host: `127.0.0.1:${portOf(server.url)}` })).status, 403)
      const fromApp = { host: "mcp.example.com", origin: "https://app.example.com" }
      assert.strictEqual((yield* rawMcpPost(url, fromApp)).status, 200)
      const fromElsewhere = { host: "mcp.example.com", origin: "https://mcp.example.com" }
      assert.strictEqual((yield* rawMcpPost(url, fromElsewhere)).status, 403)
    }))
})

layer(testApp({ mcpEnabled: false }), { excludeTestServices: true })("mcp disabled", (it) => {
  it.effect("SERVICE_API_MCP_ENABLED=false removes the routes and the feature flag; REST still works", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const path of ["/mcp", "/mcp/", "/mcp/some-bank/"]) {
        const response = yield* rawMcpPost(server.url + path, {})
        assert.strictEqual(response.status, 404, path)
        assert.include(response.body.detail, "no route")
      }
      assert.strictEqual((yield* server.request("GET", "/version")).body.features.mcp, false)
      assert.strictEqual((yield* server.request("PUT", "/v1/default/banks/still-rest", { json: {} })).status, 200)
    }))
})
