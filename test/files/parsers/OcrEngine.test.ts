/** The shared tesseract worker: offline model from node_modules, time limit, and recovery after an abandoned image. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { existsSync } from "node:fs"
import * as path from "node:path"
import { defaultLangPath, makeOcrEngine } from "../../../src/files/parsers/OcrEngine.ts"
import * as Docs from "../../fixtures/files/documents.ts"

describe("OcrEngine", () => {
  it("reads the English model from the installed @tesseract.js-data/eng package", () => {
    const langPath = defaultLangPath()
    assert.isTrue(langPath.includes(`node_modules${path.sep}@tesseract.js-data${path.sep}eng`), langPath)
    assert.isTrue(existsSync(path.join(langPath, "eng.traineddata.gz")))
  })

  it.live("an image over the time limit fails with the limit in the message", () =>
    Effect.gen(function*() {
      const engine = yield* makeOcrEngine({ timeout: "1 millis" })
      const error = yield* Effect.flip(engine.recognize(Docs.ocrImage()))
      assert.strictEqual(error.message, "OCR took longer than 1ms")
    }), 60_000)

  it.live("after an interrupted recognition the next image is still read", () =>
    Effect.gen(function*() {
      const engine = yield* makeOcrEngine()
      yield* engine.recognize(Docs.ocrImage())
      const fiber = yield* Effect.forkChild(engine.recognize(Docs.ocrImage()))
      yield* Effect.sleep("5 millis")
      yield* Fiber.interrupt(fiber)
      const text = yield* engine.recognize(Docs.ocrImage())
      assert.include(text.toLowerCase(), "margaret hamilton")
    }), 60_000)
})
