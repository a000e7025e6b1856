/**
 * Document conversion on worker threads: a document over the time or memory limit fails alone and its worker is
 * replaced, documents queue for a busy worker, and in-process conversion (`workers: 0`) gives the same markdown.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeDocumentWorkers } from "../../../src/files/workers/DocumentWorkers.ts"
import * as Docs from "../../fixtures/files/documents.ts"

const encode = (text: string) => new TextEncoder().encode(text)

/** Sections of HTML: 20,000 take turndown over a second; 60,000 need a DOM far larger than 64 MB. */
const manySections = (count: number) =>
  encode(`<html><body>${Array.from({ length: count }, (_, i) => `<h2>Part ${i}</h2><p>Text of part ${i}.</p>`).join("")}</body></html>`)

describe("DocumentWorkers", () => {
  it.live("a document over the time limit fails alone; its busy worker is ended and the next file gets a fresh one", () =>
    Effect.gen(function*() {
      const documents = yield* makeDocumentWorkers({ workers: 1, timeout: "300 millis" })
      const slow = yield* Effect.flip(documents.convert("html", manySections(20_000)))
      assert.strictEqual(slow.message, "the conversion took longer than 300ms")
      // Had the worker been kept, this would queue behind the slow document and miss the limit too.
      const next = yield* documents.convert("html", encode(Docs.html))
      assert.include(next.markdown, "# Garden Club Minutes")
    }), 60_000)

  it.live("a document that exhausts the worker's heap fails alone; the server and the next file are unaffected", () =>
    Effect.gen(function*() {
      const documents = yield* makeDocumentWorkers({ workers: 1, memoryMb: 64 })
      const huge = yield* Effect.flip(documents.convert("html", manySections(60_000)))
      assert.strictEqual(huge.message, "the document needs more memory than a conversion may use")
      const next = yield* documents.convert("html", encode(Docs.html))
      assert.include(next.markdown, "# Garden Club Minutes")
    }), 60_000)

  it.live("documents queue for a busy worker and all convert", () =>
    Effect.gen(function*() {
      const documents = yield* makeDocumentWorkers({ workers: 1 })
      const [pdf, docx, pptx] = yield* Effect.all([
        Effect.flatMap(Effect.promise(Docs.pdf), (bytes) => documents.convert("pdf", bytes)),
        Effect.flatMap(Effect.promise(Docs.docx), (bytes) => documents.convert("docx", bytes)),
        Effect.flatMap(Effect.promise(Docs.pptx), (bytes) => documents.convert("pptx", bytes))
      ], { concurrency: "unbounded" })
      assert.include(pdf.markdown, "## Storm Damage")
      assert.strictEqual(pdf.pages, 2)
      assert.include(docx.markdown, "## Open questions")
      assert.include(pptx.markdown, "## Slide 2")
    }), 60_000)

  it.live("in-process conversion gives the same markdown as a worker, and the same failures", () =>
    Effect.gen(function*() {
      const inWorker = yield* makeDocumentWorkers({ workers: 1 })
      const inProcess = yield* makeDocumentWorkers({ workers: 0 })
      const pdf = yield* Effect.promise(Docs.pdf)
      const xlsx = yield* Effect.promise(Docs.xlsx)
      assert.deepStrictEqual(yield* inProcess.convert("pdf", pdf), yield* inWorker.convert("pdf", pdf))
      assert.deepStrictEqual(yield* inProcess.convert("xlsx", xlsx), yield* inWorker.convert("xlsx", xlsx))
      const damaged = xlsx.subarray(0, 100)
      const [a, b] = [yield* Effect.flip(inProcess.convert("xlsx", damaged)), yield* Effect.flip(inWorker.convert("xlsx", damaged))]
      assert.deepStrictEqual([a.reason, a.message], [b.reason, b.message])
      assert.match(a.message, /^not a readable XLSX/)
    }), 60_000)
})
