/**
 * The documents a library has to parse (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, RTF, HTML) and the converter
 * for each. This is the work a document worker thread does; it runs in-process only when workers are turned off.
 */
import { Effect } from "effect"
import { ParserError, type ParsedFile } from "../FileParser.ts"
import { decodeText, type FileType, officeTypes } from "../FileType.ts"
import { docxToMarkdown } from "./DocxMarkdown.ts"
import { htmlToMarkdown } from "./HtmlMarkdown.ts"
import { officeToMarkdown } from "./OfficeMarkdown.ts"
import { pdfToMarkdown } from "./PdfMarkdown.ts"

export const documentTypes: ReadonlySet<FileType> = new Set<FileType>(["pdf", "docx", "html", ...officeTypes])

export const documentToMarkdown = (type: FileType, bytes: Uint8Array): Effect.Effect<ParsedFile, ParserError> => {
  if (type === "pdf") return pdfToMarkdown(bytes)
  if (type === "docx") return docxToMarkdown(bytes)
  if (officeTypes.has(type)) return officeToMarkdown(bytes, type)
  if (type === "html") {
    return Effect.suspend(() => {
      const html = decodeText(bytes)
      return html === undefined
        ? Effect.fail(ParserError.failed("the HTML is not UTF-8 text"))
        : Effect.succeed({ markdown: htmlToMarkdown(html) })
    })
  }
  return Effect.fail(ParserError.unsupported(`does not read ${type}`))
}
