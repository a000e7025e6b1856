/**
 * Directives over HTTP: create with defaults, list by priority with the active-only default and tag filters,
 * read, partial update, delete, 404s for unknown banks and directives, and 400s that name the offending field.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

const directives = (bank: string) => `/v1/default/banks/${bank}/directives`

layer(testApp(), { excludeTestServices: true })("directives", (it) => {
  it.effect("a directive is created with the spec's defaults and read back", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const created = yield* server.request("POST", directives("rules"), {
        json: { name: "Cite sources", content: "Always say which memory a claim comes from." }
      })
      assert.strictEqual(created.status, 200, created.text)
      assert.strictEqual(created.body.bank_id, "rules")
      assert.strictEqual(created.body.priority, 0)
      assert.strictEqual(created.body.is_active, true)
      assert.deepStrictEqual(created.body.tags, [])
      assert.isString(created.body.created_at)
      const read = yield* server.request("GET", `${directives("rules")}/${created.body.id}`)
      assert.deepStrictEqual(read.body, created.body)
    }))

  it.effect("the list is ordered by priority, hides inactive directives by default and filters by tags", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const make = (json: Record<string, unknown>) =>
        Effect.map(server.request("POST", directives("list"), { json: { content: "Do it.", ...json } }), (r) => r.body)
      yield* make({ name: "low", priority: -1 })
      yield* make({ name: "high", priority: 10, tags: ["a", "b"] })
      yield* make({ name: "mid", priority: 5, tags: ["a"] })
      yield* make({ name: "off", priority: 20, is_active: false })

      const names = (path: string) =>
        Effect.map(server.request("GET", path), (r) => r.body.items.map((d: any) => d.name))
      assert.deepStrictEqual(yield* names(directives("list")), ["high", "mid", "low"])
      assert.deepStrictEqual(yield* names(`${directives("list")}?active_only=false`), ["off", "high", "mid", "low"])
      assert.deepStrictEqual(yield* names(`${directives("list")}?tags=a`), ["high", "mid"])
      assert.deepStrictEqual(yield* names(`${directives("list")}?tags=a&tags=b&tags_match=all`), ["high"])
      assert.deepStrictEqual(yield* names(`${directives("list")}?tags=a&tags_match=exact`), ["mid"])
      assert.deepStrictEqual(yield* names(`${directives("list")}?tags=b&tags=z&tags_match=any`), ["high"])
      const page = yield* server.request("GET", `${directives("list")}?limit=1&offset=1`)
      assert.deepStrictEqual(page.body.items.map((d: any) => d.name), ["mid"])
      assert.strictEqual(page.body.total, 3)
    }))

  it.effect("a patch changes only the given fields; delete answers with the directive and removes it", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const created = yield* server.request("POST", directives("edit"), {
        json: { name: "Tone", content: "Be brief.", priority: 3, tags: ["support"] }
      })
      const path = `${directives("edit")}/${created.body.id}`
      const patched = yield* server.request("PATCH", path, { json: { is_active: false, priority: 7 } })
      assert.strictEqual(patched.status, 200, patched.text)
      assert.strictEqual(patched.body.name, "Tone")
      assert.strictEqual(patched.body.content, "Be brief.")
      assert.strictEqual(patched.body.priority, 7)
      assert.strictEqual(patched.body.is_active, false)
      assert.deepStrictEqual(patched.body.tags, ["support"])
      const deleted = yield* server.request("DELETE", path)
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.body.id, created.body.id)
      const gone = yield* server.request("GET", path)
      assert.strictEqual(gone.status, 404)
      assert.include(gone.body.detail, created.body.id)
    }))

  it.effect("unknown banks and directives are 404 with a detail", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bank = yield* server.request("GET", directives("nobody"))
      assert.strictEqual(bank.status, 404)
      assert.include(bank.body.detail, "nobody")
      yield* server.request("PUT", "/v1/default/banks/empty", { json: {} })
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const missing = yield* server.request(
          method,
          `${directives("empty")}/no-such-id`,
          method === "PATCH" ? { json: {} } : {}
        )
        assert.strictEqual(missing.status, 404, `${method}: ${missing.text}`)
        assert.include(missing.body.detail, "no-such-id")
      }
    }))

  it.effect("bad input is a 400 naming the field", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const fieldOf = (method: string, path: string, json?: unknown) =>
        Effect.map(server.request(method, path, json === undefined ? {} : { json }), (response) => {
          assert.strictEqual(response.status, 400, response.text)
          return response.body.errors.map((issue: any) => issue.field)
        })
      assert.include(
        yield* fieldOf("POST", directives("bad"), { name: "n", content: "c", priority: "high" }),
        "priority"
      )
      assert.include(yield* fieldOf("POST", directives("bad"), { name: "n", content: "c", priority: 1.5 }), "priority")
      assert.include(yield* fieldOf("POST", directives("bad"), { content: "c" }), "name")
      assert.include(yield* fieldOf("POST", directives("bad"), { name: "n", content: "  " }), "content")
      assert.include(yield* fieldOf("POST", directives("bad"), { name: "n", content: "c", tags: "x" }), "tags")
      const created = yield* server.request("POST", directives("bad"), { json: { name: "n", content: "c" } })
      assert.include(yield* fieldOf("PATCH", `${directives("bad")}/${created.body.id}`, { priority: "1" }), "priority")
      // The column is a 32-bit integer.
      assert.include(
        yield* fieldOf("POST", directives("bad"), { name: "n", content: "c", priority: 2 ** 31 }),
        "priority"
      )
      assert.include(
        yield* fieldOf("POST", directives("bad"), { name: "n", content: "c", priority: -(2 ** 31) - 1 }),
        "priority"
      )
      assert.include(yield* fieldOf("PATCH", `${directives("bad")}/${created.body.id}`, { priority: 1e12 }), "priority")
      const largest = yield* server.request("POST", directives("bad"), {
        json: { name: "n", content: "c", priority: 2 ** 31 - 1 }
      })
      assert.strictEqual(largest.status, 200, largest.text)
      assert.strictEqual(largest.body.priority, 2 ** 31 - 1)
      assert.include(yield* fieldOf("GET", `${directives("bad")}?limit=0`), "limit")
      assert.include(yield* fieldOf("GET", `${directives("bad")}?active_only=maybe`), "active_only")
      assert.include(yield* fieldOf("GET", `${directives("bad")}?tags_match=some`), "tags_match")
    }))
})
