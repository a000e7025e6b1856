/**
 * The `native` parser: the built-in, offline converter for each type. Documents (PDF through unpdf, DOCX through
 * mammoth and turndown, PPTX/XLSX/ODT/ODS/ODP/EPUB/RTF through officeparser, HTML through turndown) go to the
 * document workers; markdown, text, CSV and JSON come through as they are; images go to the shared OCR engine.
 * Audio is left to `transcribe`: native never sends a file off the machine.
 */
import { Effect } from "effect"
import { type FileParser, ParserError, type SourceFile } from "../FileParser.ts"
import { type FileType, imageTypes, plainTextTypes } from "../FileType.ts"
import { documentTypes } from "../formats/DocumentMarkdown.ts"
import type { DocumentConverter } from "../workers/DocumentWorkers.ts"
import type { OcrEngine } from "./OcrEngine.ts"
import { readText } from "./TextParser.ts"

const handled = (type: FileType) => documentTypes.has(type) || plainTextTypes.has(type) || imageTypes.has(type)

export const makeNativeParser = (documents: DocumentConverter, ocr: OcrEngine): FileParser => {
  const parse = (file: SourceFile) => {
    if (documentTypes.has(file.type)) return documents.convert(file.type, file.bytes)
    if (imageTypes.has(file.type)) return Effect.map(ocr.recognize(file.bytes), (markdown) => ({ markdown }))
    if (plainTextTypes.has(file.type)) return readText(file.bytes)
    return Effect.fail(ParserError.unsupported(`does not read ${file.type}`))
  }
  return { name: "native", supports: handled, parse }
}
