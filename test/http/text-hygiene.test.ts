/**
 * Text hygiene at the edge, over HTTP and MCP: NULs and unpaired surrogates are cleaned out of stored and searched
 * text (which recall then finds), identifiers carrying control characters are refused with 400 naming the field and
 * change nothing, and a body that is not UTF-8 is refused.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

/** The bank's memories, text only, in a stable order. */
const texts = (id: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const list = yield* server.request("GET", `${bank(id)}/memories/list?limit=100`)
    return (list.body.items ?? []).map((item: any) => item.text as string).sort()
  })

layer(testApp(), { excludeTestServices: true })("text hygiene", (it) => {
  it.effect("retain removes NULs from content, context, metadata and tags; recall with a NUL finds the text", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const retained = yield* server.request("POST", `${bank("nul")}/memories`, {
        json: {
          items: [{
            content: "Ingrid keeps bee\u0000hives on the roof of the old library.",
            context: "notes\u0000 from a PDF",
            metadata: { "sou\u0000rce": "scan\u0000ner" },
            tags: ["bees\u0000"]
          }]
        }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      const list = yield* server.request("GET", `${bank("nul")}/memories/list?limit=10`)
      const [memory] = list.body.items
      assert.include(memory.text, "beehives")
      assert.notInclude(list.text, "\\u0000")
      assert.strictEqual(memory.context, "notes from a PDF")
      assert.deepStrictEqual(memory.metadata, { source: "scanner" })
      assert.deepStrictEqual(memory.tags, ["bees"])

      const recalled = yield* server.request("POST", `${bank("nul")}/memories/recall`, {
        json: { query: "bee\u0000hives on the roof", tags: ["bees\u0000"] }
      })
      assert.strictEqual(recalled.status, 200, recalled.text)
      assert.include(recalled.body.results.map((result: any) => result.text).join(" "), "beehives")

      const listed = yield* server.request("GET", `${bank("nul")}/memories/list?q=bee%00hives`)
      assert.strictEqual(listed.status, 200, listed.text)
      assert.strictEqual(listed.body.total, 1)
    }))

  it.effect("an unpaired surrogate becomes U+FFFD instead of failing the write", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // JSON.stringify would escape it the same way; written out to show what a client sends.
      const body = `{"items":[{"content":"Oskar signed the lease \\ud800 on Tuesday.","metadata":{"k":"\\udfff"}}]}`
      const retained = yield* server.request("POST", `${bank("surrogate")}/memories`, {
        body,
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      const list = yield* server.request("GET", `${bank("surrogate")}/memories/list`)
      assert.include(list.body.items[0].text, "lease \ufffd on Tuesday")
      assert.deepStrictEqual(list.body.items[0].metadata, { k: "\ufffd" })
    }))

  it.effect("identifiers with control characters are refused with 400 naming the field, and nothing changes", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("ids")}/memories`, {
        json: { items: [{ content: "Wen grows tomatoes." }] }
      })
      const before = yield* texts("ids")

      const refusals = [
        yield* server.request("GET", `${bank("ids")}/memories/nope%00`),
        yield* server.request("GET", `${bank("id%00s")}/memories/list`),
        yield* server.request("DELETE", `${bank("ids")}/documents/doc%0A1`),
        yield* server.request("GET", `${bank("ids")}/documents?document_id=a%00`),
        yield* server.request("POST", `${bank("ids")}/memories`, {
          json: { items: [{ content: "Wen also grows basil.", document_id: "notes\u0000" }] }
        })
      ]
      for (const refused of refusals) {
        assert.strictEqual(refused.status, 400, refused.text)
        assert.include(refused.body.detail, "must not contain control characters")
      }
      assert.strictEqual(refusals[0]!.body.errors[0].field, "memory_id")
      assert.strictEqual(refusals[0]!.body.errors[0].location, "path")
      assert.strictEqual(refusals[1]!.body.errors[0].field, "bank_id")
      assert.strictEqual(refusals[3]!.body.errors[0].location, "query")
      assert.strictEqual(refusals[4]!.body.errors[0].field, "items.0.document_id")
      assert.deepStrictEqual(yield* texts("ids"), before)
      const banks = yield* server.request("GET", "/v1/default/banks")
      assert.notInclude(banks.text, "id\\u0000s")

      const malformed = yield* server.request("GET", `${bank("ids")}/memories/%E0%A4%A`)
      assert.strictEqual(malformed.status, 400, malformed.text)
      assert.include(malformed.body.detail, "memory_id")
    }))

  it.effect("a body that is not valid UTF-8 is refused and stores nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bytes = Buffer.concat([
        Buffer.from(`{"items":[{"content":"Lars paints `),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from(` boats."}]}`)
      ])
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}${bank("bytes")}/memories`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: bytes
        }).then(async (r) => ({ status: r.status, body: await r.json() as any }))
      )
      assert.strictEqual(response.status, 400)
      assert.strictEqual(response.body.detail, "body: is not valid UTF-8")
      assert.deepStrictEqual(yield* texts("bytes"), [])
    }))

  it.effect("a file upload's request field follows the same rules", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const form = new FormData()
      form.append("files", new Blob(["# Notes\n\nMarta repairs clocks."], { type: "text/markdown" }), "notes.md")
      form.append("request", JSON.stringify({ files_metadata: [{ document_id: "clock\u0000s" }] }))
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}${bank("upload")}/files/retain`, { method: "POST", body: form })
          .then(async (r) => ({ status: r.status, body: await r.json() as any }))
      )
      assert.strictEqual(response.status, 400)
      assert.strictEqual(response.body.errors[0].field, "request.files_metadata.0.document_id")
    }))

  it.effect("MCP tool arguments: text is cleaned, ids with control characters are a tool error", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`)
      yield* mcp.ok("retain", { bank_id: "mcp-nul", content: "Ana\u0000 plays the cello every Sunday." })
      const stored = yield* texts("mcp-nul")
      assert.include(stored.join(" "), "Ana plays the cello")
      const recalled = yield* mcp.ok("recall", { bank_id: "mcp-nul", query: "cel\u0000lo" })
      assert.include(JSON.stringify(recalled), "cello")
      assert.include(
        yield* mcp.fails("retain", { bank_id: "mcp-nul", content: "x", document_id: "a\u0000" }),
        "document_id"
      )
      assert.include(yield* mcp.fails("get_bank", { bank_id: "mcp\u0000nul" }), "bank_id")
      assert.deepStrictEqual(yield* texts("mcp-nul"), stored)
    })))
})
