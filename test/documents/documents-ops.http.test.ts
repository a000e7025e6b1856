/**
 * The document operations of the published Hindsight client 0.9.1 over the real HTTP server, driven through the
 * client package itself: editing a document's tags, its chunks, reprocessing it, exporting documents as a
 * transfer archive, downloading it, importing it into another bank, and the removed synchronous export. Every
 * bad input answers 4xx with `detail` and changes nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { createClient, createConfig, HindsightClient, sdk } from "@vectorize-io/hindsight-client"
import { bankPath, call, ok, operationFinished, settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const source = "docs-source"
const target = "docs-target"

const clients = Effect.map(TestServer, (server) => ({
  client: new HindsightClient({ baseUrl: server.url }),
  raw: createClient(createConfig({ baseUrl: server.url }))
}))

const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

const seed = Effect.gen(function*() {
  yield* ok("POST", `${bankPath(source)}/memories`, {
    items: [
      {
        content: "Alice moved to Lisbon in 2021. She works as a marine biologist at the aquarium. " +
          "Alice adopted a dog named Pixel because she wanted company on long walks.",
        document_id: "alice-notes",
        tags: ["alpha"],
        context: "profile notes",
        metadata: { source: "notebook" }
      },
      { content: "Bob plays the cello in the Porto orchestra every Friday.", document_id: "bob-notes", tags: ["alpha"] }
    ]
  })
})

const memoriesOf = (bankId: string, documentId: string) =>
  Effect.map(
    call("GET", `${bankPath(bankId)}/memories/list?limit=1000`),
    (response) => (response.body.items as Array<any>).filter((memory) => memory.document_id === documentId)
  )

const state = (bankId: string) =>
  Effect.gen(function*() {
    const documents = yield* call("GET", `${bankPath(bankId)}/documents`)
    const memories = yield* call("GET", `${bankPath(bankId)}/memories/list?limit=1000`)
    const operations = yield* call("GET", `${bankPath(bankId)}/operations`)
    return {
      documents: documents.body.items?.map((d: any) => [d.document_id, [...d.tags].sort(), d.memory_unit_count]),
      memories: memories.body.items?.map((m: any) => [m.id, m.text, [...m.tags].sort()]).sort(),
      operations: operations.body.operations?.length
    }
  })

layer(testApp(), { excludeTestServices: true })("document operations of the 0.9 client", (it) => {
  it.effect("updateDocument sets the tags of the document and of every memory it produced", () =>
    Effect.gen(function*() {
      yield* seed
      const { client } = yield* clients
      const updated = yield* promise(() => client.updateDocument(source, "alice-notes", { tags: ["beta", "gamma"] }))
      assert.deepStrictEqual(updated, { success: true })
      const document = yield* call("GET", `${bankPath(source)}/documents/alice-notes`)
      assert.deepStrictEqual([...document.body.tags].sort(), ["beta", "gamma"])
      const memories = yield* memoriesOf(source, "alice-notes")
      assert.isAbove(memories.length, 0)
      for (const memory of memories) assert.deepStrictEqual([...memory.tags].sort(), ["beta", "gamma"])
      // Recall sees the new tags: the brain applied the change as a delta.
      const recalled = yield* ok("POST", `${bankPath(source)}/memories/recall`, {
        query: "Who plays the cello or works at the aquarium?",
        tags: ["beta"],
        tags_match: "all_strict"
      })
      assert.isAbove(recalled.body.results.length, 0)
      for (const result of recalled.body.results) assert.include(result.tags, "beta")
      const bob = yield* memoriesOf(source, "bob-notes")
      for (const memory of bob) assert.deepStrictEqual(memory.tags, ["alpha"])
    }))

  it.effect("listDocumentChunks lists a document's chunks in order, paged", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      const response = yield* promise(() =>
        sdk.listDocumentChunks({ client: raw, path: { bank_id: source, document_id: "alice-notes" } })
      )
      assert.strictEqual(response.response.status, 200)
      const page = response.data!
      assert.isAbove(page.total, 0)
      assert.strictEqual(page.limit, 100)
      assert.strictEqual(page.offset, 0)
      assert.strictEqual(page.items.length, page.total)
      page.items.forEach((chunk, index) => {
        assert.strictEqual(typeof chunk.chunk_id, "string")
        assert.strictEqual(chunk.document_id, "alice-notes")
        assert.strictEqual(chunk.bank_id, source)
        assert.strictEqual(chunk.chunk_index, index)
        assert.isTrue(Number.isFinite(Date.parse(chunk.created_at)))
      })
      assert.include(page.items.map((chunk) => chunk.chunk_text).join(" "), "Lisbon")
      const second = yield* promise(() =>
        sdk.listDocumentChunks({
          client: raw,
          path: { bank_id: source, document_id: "alice-notes" },
          query: { limit: 1, offset: 0 }
        })
      )
      assert.strictEqual(second.data!.items.length, 1)
      assert.strictEqual(second.data!.limit, 1)
    }))

  it.effect("reprocessDocument extracts the stored text again in the background, replacing its memories", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      const before = yield* memoriesOf(source, "alice-notes")
      const response = yield* promise(() =>
        sdk.reprocessDocument({ client: raw, path: { bank_id: source, document_id: "alice-notes" } })
      )
      assert.strictEqual(response.response.status, 200)
      const body = response.data!
      assert.strictEqual(body.success, true)
      assert.strictEqual(body.items_count, 1)
      assert.strictEqual(typeof body.operation_id, "string")
      const done = yield* operationFinished(source, body.operation_id)
      assert.strictEqual(done.status, "completed", JSON.stringify(done))
      assert.strictEqual(done.task_type, "document_reprocess")
      const after = yield* memoriesOf(source, "alice-notes")
      assert.isAbove(after.length, 0)
      // Fresh memories (new ids) with the same statements, the document's tags and metadata kept.
      assert.isFalse(after.some((memory: any) => before.some((old: any) => old.id === memory.id)))
      assert.deepStrictEqual(after.map((m: any) => m.text).sort(), before.map((m: any) => m.text).sort())
      for (const memory of after) {
        assert.deepStrictEqual([...memory.tags].sort(), ["beta", "gamma"])
        assert.strictEqual(memory.metadata.source, "notebook")
      }
    }))

  it.effect("exportDocuments runs in the background; the archive downloads and imports into another bank", () =>
    Effect.gen(function*() {
      const { client, raw } = yield* clients
      yield* settled(source)
      const submitted = yield* promise(() => sdk.exportDocuments({ client: raw, path: { bank_id: source } }))
      assert.strictEqual(submitted.response.status, 202)
      assert.strictEqual(typeof submitted.data!.operation_id, "string")
      assert.strictEqual(submitted.data!.status, "pending")
      const done = yield* operationFinished(source, submitted.data!.operation_id)
      assert.strictEqual(done.status, "completed", JSON.stringify(done))
      const meta = done.result_metadata
      assert.strictEqual(meta.documents_count, 2)
      assert.match(meta.download_url, /^\/v1\/default\/files\/download\/export-[0-9a-f-]{36}\.zip$/)
      const downloaded = yield* promise(() =>
        sdk.downloadFile({ client: raw, path: { key: meta.storage_key }, parseAs: "arrayBuffer" })
      )
      assert.strictEqual(downloaded.response.status, 200)
      assert.strictEqual(downloaded.response.headers.get("content-type"), "application/zip")
      const bytes = new Uint8Array(downloaded.data as ArrayBuffer)
      assert.strictEqual(bytes.length, meta.byte_size)
      assert.deepStrictEqual([...bytes.slice(0, 2)], [0x50, 0x4b])

      // The client's own blocking helper: submit, poll the operation, fetch download_url.
      const viaHelper = yield* promise(() =>
        client.exportDocuments(source, { documentIds: ["bob-notes"], pollIntervalMs: 50, timeoutMs: 30_000 })
      )
      assert.deepStrictEqual([...viaHelper.slice(0, 2)], [0x50, 0x4b])

      const imported = yield* promise(() =>
        sdk.importDocuments({ client: raw, path: { bank_id: target }, body: { file: new Blob([bytes]) } })
      )
      assert.strictEqual(imported.response.status, 202, JSON.stringify(imported.error))
      assert.strictEqual(imported.data!.status, "pending")
      const importDone = yield* operationFinished(target, imported.data!.operation_id)
      assert.strictEqual(importDone.status, "completed", JSON.stringify(importDone))
      assert.strictEqual(importDone.result_metadata.imported, 2)
      const fromSource = yield* state(source)
      const inTarget = yield* state(target)
      assert.deepStrictEqual(inTarget.documents.sort(), fromSource.documents.sort())
      assert.deepStrictEqual(
        inTarget.memories.map((m: any) => [m[1], m[2]]).sort(),
        fromSource.memories.map((m: any) => [m[1], m[2]]).sort()
      )
      // The same archive again: existing documents are skipped by default.
      const again = yield* promise(() =>
        sdk.importDocuments({ client: raw, path: { bank_id: target }, body: { file: new Blob([bytes]) } })
      )
      const againDone = yield* operationFinished(target, again.data!.operation_id)
      assert.strictEqual(againDone.result_metadata.skipped, 2)
      assert.strictEqual(againDone.result_metadata.imported, 0)
      // new-id keeps both: the imported copies get fresh ids.
      const renamed = yield* promise(() =>
        sdk.importDocuments({
          client: raw,
          path: { bank_id: target },
          query: { on_conflict: "new-id" },
          body: { file: new Blob([bytes]) }
        })
      )
      const renamedDone = yield* operationFinished(target, renamed.data!.operation_id)
      assert.strictEqual(renamedDone.result_metadata.imported, 2)
      const documents = yield* call("GET", `${bankPath(target)}/documents`)
      assert.strictEqual(documents.body.total, 4)
    }))

  it.effect("exportDocumentsSyncRemoved answers 410 with detail, as the client documents", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      const response = yield* promise(() => sdk.exportDocumentsSyncRemoved({ client: raw, path: { bank_id: source } }))
      assert.strictEqual(response.response.status, 410)
      assert.include((response.error as any).detail, "document-transfer/export")
    }))

  it.effect("bad input answers 4xx with detail naming the field, and changes nothing", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      yield* settled(source)
      const before = yield* state(source)
      const doc = `${bankPath(source)}/documents/alice-notes`
      const cases: Array<[string, string, unknown, number, string | undefined]> = [
        ["PATCH", doc, {}, 400, "body"],
        ["PATCH", doc, { tags: "x" }, 400, "tags"],
        ["PATCH", doc, { tags: [""] }, 400, "tags.0"],
        ["PATCH", `${bankPath(source)}/documents/nope`, { tags: ["x"] }, 404, undefined],
        ["PATCH", `${bankPath("no-such-bank")}/documents/alice-notes`, { tags: ["x"] }, 404, undefined],
        ["GET", `${doc}/chunks?limit=0`, undefined, 400, "limit"],
        ["GET", `${doc}/chunks?offset=-1`, undefined, 400, "offset"],
        ["GET", `${bankPath(source)}/documents/nope/chunks`, undefined, 404, undefined],
        ["POST", `${bankPath(source)}/documents/nope/reprocess`, undefined, 404, undefined],
        ["POST", `${bankPath(source)}/document-transfer/export?document_id=nope`, undefined, 404, undefined],
        [
          "POST",
          `${bankPath(source)}/document-transfer/export?document_id=alice-notes&include_observations=true`,
          undefined,
          400,
          "include_observations"
        ],
        [
          "POST",
          `${bankPath(source)}/document-transfer/export?include_observations=maybe`,
          undefined,
          400,
          "include_observations"
        ],
        ["GET", "/v1/default/files/download/..%2F..%2Fetc%2Fpasswd", undefined, 400, "key"],
        ["GET", "/v1/default/files/download/export-00000000-0000-0000-0000-000000000000.zip", undefined, 404, undefined]
      ]
      for (const [method, path, json, status, field] of cases) {
        const response = yield* call(method, path, json)
        assert.strictEqual(response.status, status, `${method} ${path}: ${response.text}`)
        assert.isString(response.body.detail, `${method} ${path}`)
        if (field !== undefined) {
          assert.include(response.body.errors.map((e: any) => e.field), field, `${method} ${path}: ${response.text}`)
        }
      }
      // The dot-dot path never reaches the route as a traversal either.
      const dotted = yield* call("GET", "/v1/default/files/download/../../../etc/passwd")
      assert.isTrue(dotted.status === 404 || dotted.status === 400, dotted.text)
      const notZip = yield* promise(() =>
        sdk.importDocuments({ client: raw, path: { bank_id: source }, body: { file: new Blob(["not a zip"]) } })
      )
      assert.strictEqual(notZip.response.status, 400)
      assert.deepStrictEqual((notZip.error as any).errors.map((e: any) => e.field), ["file"])
      const badConflict = yield* promise(() =>
        sdk.importDocuments({
          client: raw,
          path: { bank_id: source },
          query: { on_conflict: "merge" },
          body: { file: new Blob(["x"]) }
        })
      )
      assert.strictEqual(badConflict.response.status, 400)
      assert.isString((badConflict.error as any).detail)
      assert.deepStrictEqual(yield* state(source), before)
    }))
})

const aliceKey = "k-alice-0123456789"
const bobKey = "k-bob-0123456789ab"
const scoped = testApp({
  tenantExtension: "api_key",
  tenantApiKey: Option.some(Redacted.make("k-admin-0123456789")),
  tenantApiKeys: [
    { key: Redacted.make(aliceKey), banks: ["alice"] },
    { key: Redacted.make(bobKey), banks: ["bob"] }
  ]
})

layer(scoped, { excludeTestServices: true })("stored files with bank-scoped keys", (it) => {
  it.effect("a download key of a bank the caller's key does not reach answers 404, as a missing file", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })
      const bob = new HindsightClient({ baseUrl: server.url, apiKey: bobKey })
      yield* promise(() => bob.retain("bob", "Bob's locker code is 4512.", { documentId: "locker" }))
      const archive = yield* promise(() => bob.exportDocuments("bob", { pollIntervalMs: 50, timeoutMs: 30_000 }))
      assert.deepStrictEqual([...archive.slice(0, 2)], [0x50, 0x4b])
      const operations = yield* server.request(
        "GET",
        `${bankPath("bob")}/operations?task_type=document_export`,
        as(bobKey)
      )
      const done = yield* server.request(
        "GET",
        `${bankPath("bob")}/operations/${operations.body.operations[0].id}`,
        as(bobKey)
      )
      const url = done.body.result_metadata.download_url
      assert.strictEqual((yield* server.request("GET", url, as(bobKey))).status, 200)
      const refused = yield* server.request("GET", url, as(aliceKey))
      assert.strictEqual(refused.status, 404)
      assert.include(refused.body.detail, "not found")
      assert.notInclude(refused.text, "4512")
      assert.strictEqual((yield* server.request("GET", url)).status, 401)
    }))
})
