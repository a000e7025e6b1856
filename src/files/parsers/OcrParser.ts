/** The `ocr` parser: the text of an image through the shared tesseract engine, as paragraphs. */
import { Effect } from "effect"
import type { FileParser } from "../FileParser.ts"
import { imageTypes } from "../FileType.ts"
import type { OcrEngine } from "./OcrEngine.ts"

export const makeOcrParser = (engine: OcrEngine): FileParser => ({
  name: "ocr",
  supports: (type) => imageTypes.has(type),
  parse: (file) => Effect.map(engine.recognize(file.bytes), (markdown) => ({ markdown }))
})
