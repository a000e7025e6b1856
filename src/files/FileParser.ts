/**
 * The contract every parser (`native`, `ocr`, `transcribe`, `text`) fulfils for the `FileConverter`: say which
 * file types it takes and turn one file into markdown. A parser never throws and never decides fallbacks; it
 * answers with a `ParserError` (`unsupported` or `failed`) and the converter moves on to the next in the chain.
 */
import { Data } from "effect"
import type { Effect } from "effect"
import type { FileType } from "./FileType.ts"

export interface SourceFile {
  readonly filename: string
  readonly contentType?: string | undefined
  readonly bytes: Uint8Array
  readonly type: FileType
}

export interface ParsedFile {
  readonly markdown: string
  /** Pages of a PDF, slides of a presentation. */
  readonly pages?: number | undefined
}

/** Why one parser did not produce markdown; `message` is safe to show a client (no secrets, no stack). */
export class ParserError extends Data.TaggedError("ParserError")<{
  readonly reason: "unsupported" | "failed"
  readonly message: string
}> {
  static unsupported(message: string) {
    return new ParserError({ reason: "unsupported", message })
  }
  static failed(message: string) {
    return new ParserError({ reason: "failed", message })
  }
}

export interface FileParser {
  readonly name: string
  readonly supports: (type: FileType) => boolean
  readonly parse: (file: SourceFile) => Effect.Effect<ParsedFile, ParserError>
}

/** A short, single-line description of whatever a library threw, for `ParserError.failed`. */
export const describeCause = (cause: unknown): string => {
  const raw = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause)
  const line = raw.replace(/^(\[OfficeParser\]:\s*|Error:\s*)+/, "").split("\n")[0]!.trim()
  return line.length > 300 ? `${line.slice(0, 297)}...` : line === "" ? "unknown error" : line
}
