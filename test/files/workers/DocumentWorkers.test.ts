/**
 * Document conversion on worker threads: a document over the time or memory limit fails alone and its worker is
 * replaced, documents queue for a busy worker, and in-process conversion (`workers: 0`) gives the same markdown.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { BroadcastChannel } from "node:worker_threads"
import { makeDocumentWorkers } from "../../../src/files/workers/DocumentWorkers.ts"
import * as Docs from "../../fixtures/files/documents.ts"

const encode = (text: string) => new TextEncoder().encode(text)

/** Sections of HTML: 60,000 need a DOM far larger than 64 MB, however fast the machine builds it. */
const manySections = (count: number) =>
  encode(
    `<html><body>${
      Array.from({ length: count }, (_, i) => `<h2>Part ${i}</h2><p>Text of part ${i}.</p>`).join("")
    }</body></html>`
  )

/** Workers that run `stuckDocumentWorker.ts`: the real converter, plus documents they never finish. */
const stuckWorkerScript = new URL("./stuckDocumentWorker.ts", import.meta.url)

/** A document the stuck worker holds until it is ended, and the moment the worker has it. */
const stuckDocument = Effect.gen(function*() {
  const name = `stuck-document-${randomUUID()}`
  const channel = yield* Effect.acquireRelease(
    Effect.sync(() => new BroadcastChannel(name)),
    (channel) => Effect.sync(() => channel.close())
  )
  // Listening from the start, so the announcement cannot come before anyone hears it.
  const taken = new Promise<void>((resolve) => {
    channel.onmessage = () => resolve()
  })
  return { bytes: encode(`stuck:${name}`), taken: Effect.promise(() => taken) }
})

describe("DocumentWorkers", () => {
  // The test clock moves only when told to: the stuck document exceeds the limit, the next one cannot, on any machine.
  it.effect(
    "a document over the time limit fails alone; its busy worker is ended and the next file gets a fresh one",
    () =>
      Effect.gen(function*() {
        const documents = yield* makeDocumentWorkers({ workers: 1, timeout: "5 minutes" }, stuckWorkerScript)
        const stuck = yield* stuckDocument
        const converting = yield* Effect.forkChild(Effect.flip(documents.convert("html", stuck.bytes)))
        yield* stuck.taken
        yield* TestClock.adjust("5 minutes")
        const slow = yield* Fiber.join(converting)
        assert.strictEqual(slow.message, "the conversion took longer than 5m")
        // Had the worker been kept, this would queue behind the stuck document and never finish.
        const next = yield* documents.convert("html", encode(Docs.html))
        assert.include(next.markdown, "# Garden Club Minutes")
      }).pipe(
        // Starting a worker takes real time while the limit's timer waits on the test clock: expected here, so the
        // clock's warning about it comes only after the vitest time limit.
        Effect.provide(TestClock.layer({ warningDelay: "2 minutes" }))
      ),
    60_000
  )

  it.live(
    "a document that exhausts the worker's heap fails alone; the server and the next file are unaffected",
    () =>
      Effect.gen(function*() {
        const documents = yield* makeDocumentWorkers({ workers: 1, memoryMb: 64 })
        const huge = yield* Effect.flip(documents.convert("html", manySections(60_000)))
        assert.strictEqual(huge.message, "the document needs more memory than a conversion may use")
        const next = yield* documents.convert("html", encode(Docs.html))
        assert.include(next.markdown, "# Garden Club Minutes")
        // Which document runs out of memory does not depend on speed, but V8 collects ever harder before giving up:
        // 4 s on a quiet 2-core machine, 19 s on a busy one. The limit below only guards against a hang.
      }),
    180_000
  )

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

  it.live(
    "in-process conversion gives the same markdown as a worker, and the same failures",
    () =>
      Effect.gen(function*() {
        const inWorker = yield* makeDocumentWorkers({ workers: 1 })
        const inProcess = yield* makeDocumentWorkers({ workers: 0 })
        const pdf = yield* Effect.promise(Docs.pdf)
        const xlsx = yield* Effect.promise(Docs.xlsx)
        assert.deepStrictEqual(yield* inProcess.convert("pdf", pdf), yield* inWorker.convert("pdf", pdf))
        assert.deepStrictEqual(yield* inProcess.convert("xlsx", xlsx), yield* inWorker.convert("xlsx", xlsx))
        const damaged = xlsx.subarray(0, 100)
        const [a, b] = [
          yield* Effect.flip(inProcess.convert("xlsx", damaged)),
          yield* Effect.flip(inWorker.convert("xlsx", damaged))
        ]
        assert.deepStrictEqual([a.reason, a.message], [b.reason, b.message])
        assert.match(a.message, /^not a readable XLSX/)
      }),
    60_000
  )
})
