/**
 * With the api_key tenant extension on, every route but /health and /version needs the bearer key, and it is checked
 * before anything reads the request's body.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

const key = "k-test-0123456789"

const app = testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)) })

layer(app, { excludeTestServices: true })("authentication", (it) => {
  it.effect("every documented route answers 401 JSON without the key or with a wrong one, and works with it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const openapi = yield* server.request("GET", "/openapi.json", { headers: { authorization: `Bearer ${key}` } })
      assert.strictEqual(openapi.status, 200)
      const routes: Array<[string, string]> = []
      for (const [path, item] of Object.entries(openapi.body.paths as Record<string, object>)) {
        for (const method of Object.keys(item)) routes.push([method.toUpperCase(), path])
      }
      assert.isAbove(routes.length, 15)
      for (const [method, template] of routes) {
        const path = template.replace("{bank_id}", "secured").replace("{operation_id}", "op-1")
        const isPublic = path === "/health" || path === "/version"
        const json = method === "GET" || method === "DELETE" ? undefined : {}
        const anonymous = yield* server.request(method, path, json === undefined ? {} : { json })
        const wrong = yield* server.request(method, path, {
          headers: { authorization: "Bearer wrong-key" },
          ...(json === undefined ? {} : { json })
        })
        if (isPublic) {
          assert.strictEqual(anonymous.status, 200, path)
          continue
        }
        assert.strictEqual(anonymous.status, 401, `${method} ${path}`)
        assert.strictEqual(wrong.status, 401, `${method} ${path}`)
        assert.include(anonymous.body.detail, "API key")
        assert.notInclude(anonymous.text, key)
      }
      const withKey = yield* server.request("PUT", "/v1/default/banks/secured", {
        json: { name: "Secured" },
        headers: { authorization: `Bearer ${key}` }
      })
      assert.strictEqual(withKey.status, 200)
      const listed = yield* server.request("GET", "/v1/default/banks", { headers: { authorization: `Bearer ${key}` } })
      assert.deepStrictEqual(listed.body.banks.map((bank: any) => bank.bank_id), ["secured"])
    }))

  it.effect("the key is checked before any body is read: bodies no route would accept still answer 401", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // Not UTF-8: text hygiene would answer 400 had it read the body first.
      const invalid = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/default/banks/secured/memories`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d])
        }).then(async (response) => ({ status: response.status, text: await response.text() }))
      )
      assert.strictEqual(invalid.status, 401, invalid.text)
      const huge = JSON.stringify({ items: Array.from({ length: 200_000 }, (_, n) => ({ content: `x${n}` })) })
      const refused = yield* server.request("POST", "/v1/default/banks/secured/memories", {
        body: huge,
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(refused.status, 401)
      for (const path of ["/docs", "/openapi.json", "/metrics", "/mcp"]) {
        assert.strictEqual((yield* server.request("GET", path)).status, 401, path)
      }
      assert.strictEqual((yield* server.request("GET", "/health")).status, 200)
    }))
})
