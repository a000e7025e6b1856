/**
 * The `text` parser: takes a file as UTF-8 text (UTF-16 with a byte-order mark too) and keeps it as it is. It
 * refuses anything binary, so a chain such as `text,native` reads text files verbatim and leaves the rest to the
 * next parser.
 */
import { Effect } from "effect"
import { type FileParser, ParserError } from "../FileParser.ts"
import { decodeText, type FileType, plainTextTypes } from "../FileType.ts"

const textual: ReadonlySet<FileType> = new Set([...plainTextTypes, "html"])

/** Decodes a file that should be text; a failure says it is binary. */
export const readText = (bytes: Uint8Array) =>
  Effect.suspend(() => {
    const text = decodeText(bytes)
    return text === undefined
      ? Effect.fail(ParserError.failed("the content is binary, not UTF-8 text"))
      : Effect.succeed({ markdown: text.trim() })
  })

export const textParser: FileParser = {
  name: "text",
  supports: (type) => textual.has(type),
  parse: (file) => readText(file.bytes)
}
