/**
 * File retain over HTTP (multipart): each file becomes a document retained by a background operation; parsers
 * that are not enabled and malformed requests are refused with 400 naming the field, storing nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { html, markdown, pdf } from "../fixtures/files/documents.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const bank = "/v1/default/banks/files"

const upload = (files: ReadonlyArray<{ name: string; type: string; bytes: Uint8Array | string }>, request?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const form = new FormData()
    for (const file of files) {
      form.append(
        "files",
        new Blob([typeof file.bytes === "string" ? file.bytes : Buffer.from(file.bytes)], { type: file.type }),
        file.name
      )
    }
    if (request !== undefined) form.append("request", typeof request === "string" ? request : JSON.stringify(request))
    return yield* Effect.promise(async () => {
      const response = await fetch(`${server.url}${bank}/files/retain`, { method: "POST", body: form })
      return { status: response.status, body: await response.json() as any }
    })
  })

layer(testApp(), { excludeTestServices: true })("file retain", (it) => {
  it.effect("a PDF, an HTML page and a Markdown file each become a document with their metadata and tags", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const response = yield* upload([
        { name: "report.pdf", type: "application/pdf", bytes: yield* Effect.promise(pdf) },
        { name: "page.html", type: "text/html", bytes: html },
        { name: "reading.md", type: "text/markdown", bytes: markdown }
      ], {
        tags: ["imported"],
        files_metadata: [{ metadata: { source: "scanner" }, tags: ["finance"] }, {}, { document_id: "books" }]
      })
      assert.strictEqual(response.status, 200, JSON.stringify(response.body))
      assert.strictEqual(response.body.operation_ids.length, 3)
      for (const id of response.body.operation_ids) {
        const done = yield* eventually(
          server.request("GET", `${bank}/operations/${id}`),
          (r) => r.body.status === "completed" || r.body.status === "failed"
        )
        assert.strictEqual(done.body.status, "completed", JSON.stringify(done.body))
        assert.strictEqual(done.body.task_type, "file_retain")
      }
      const documents = yield* server.request("GET", `${bank}/documents`)
      assert.deepStrictEqual(documents.body.items.map((d: any) => d.document_id).sort(), [
        "books",
        "page.html",
        "report.pdf"
      ])
      const report = yield* server.request("GET", `${bank}/documents/report.pdf`)
      assert.deepStrictEqual(report.body.tags.sort(), ["finance", "imported"])
      assert.strictEqual(report.body.metadata.source, "scanner")
      assert.isAbove(report.body.memory_unit_count, 0)
      const memories = yield* server.request("GET", `${bank}/memories/list?limit=100`)
      const fromPdf = memories.body.items.filter((m: any) => m.document_id === "report.pdf")
      assert.isAbove(fromPdf.length, 0)
      assert.strictEqual(fromPdf[0].metadata.filename, "report.pdf")
      assert.strictEqual(fromPdf[0].metadata.parser, "native")
      const books = memories.body.items.filter((m: any) => m.document_id === "books")
      assert.isTrue(books.some((m: any) => m.text.includes("Dune")))
    }))

  it.effect("a parser that is not enabled, a bad request JSON or no file answers 400 and stores nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank, { json: {} })
      const before = yield* server.request("GET", `${bank}/operations`)
      const notEnabled = yield* upload([{ name: "a.txt", type: "text/plain", bytes: "hello" }], {
        parser: "markitdown"
      })
      assert.strictEqual(notEnabled.status, 400)
      assert.include(notEnabled.body.detail, "markitdown")
      assert.deepStrictEqual(notEnabled.body.errors.map((e: any) => e.field), ["request.parser"])
      const perFile = yield* upload([{ name: "a.txt", type: "text/plain", bytes: "hello" }], {
        files_metadata: [{ parser: ["text", "bogus"] }]
      })
      assert.strictEqual(perFile.status, 400)
      assert.deepStrictEqual(perFile.body.errors.map((e: any) => e.field), ["request.files_metadata.0.parser"])
      const badJson = yield* upload([{ name: "a.txt", type: "text/plain", bytes: "hello" }], "{not json")
      assert.strictEqual(badJson.status, 400)
      assert.match(badJson.body.errors[0].field, /^request/)
      const badField = yield* upload([{ name: "a.txt", type: "text/plain", bytes: "hello" }], { tags: "x" })
      assert.strictEqual(badField.status, 400)
      assert.deepStrictEqual(badField.body.errors.map((e: any) => e.field), ["request.tags"])
      const noFiles = yield* upload([], { tags: ["x"] })
      assert.strictEqual(noFiles.status, 400)
      const after = yield* server.request("GET", `${bank}/operations`)
      assert.strictEqual(after.body.total, before.body.total)
    }))

  it.effect("a file no parser of the chain can read fails its operation with a clear message", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const response = yield* upload([{
        name: "blob.bin",
        type: "application/octet-stream",
        bytes: new Uint8Array([0, 159, 146, 150, 0, 1])
      }], {
        parser: "text"
      })
      assert.strictEqual(response.status, 200)
      const failed = yield* eventually(
        server.request("GET", `${bank}/operations/${response.body.operation_ids[0]}`),
        (r) => r.body.status === "failed" || r.body.status === "completed"
      )
      assert.strictEqual(failed.body.status, "failed")
      assert.include(failed.body.error_message, "blob.bin")
    }))
})
