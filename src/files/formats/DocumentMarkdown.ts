/**
 * The documents a library has to parse (PDF, DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, RTF, HTML) and the converter
 * for each. This is the work a document worker thread does; it runs in-process only when workers are turned off.
 * Each converter, with its parsing library, is loaded by the first document that needs it, since the server parses
 * documents on worker threads, if ever. Imported alone officeparser takes 25 MiB of a process, mammoth 16,
 * turndown 7 and unpdf 3; loaded on first use with the other optional libraries (transformers.js, tesseract.js,
 * web-tree-sitter, yauzl), a fresh server holds 14 MB less heap and 40-50 MiB less resident memory.
 */
import { Effect } from "effect"
import { describeCause, type ParsedFile, ParserError } from "../FileParser.ts"
import { decodeText, type FileType, officeTypes } from "../FileType.ts"

export const documentTypes: ReadonlySet<FileType> = new Set<FileType>(["pdf", "docx", "html", ...officeTypes])

/** A converter's module, imported once (the module loader keeps it); a library that cannot load fails the file. */
const load = <A>(name: string, importModule: () => Promise<A>): Effect.Effect<A, ParserError> =>
  Effect.tryPromise({
    try: importModule,
    catch: (cause) => ParserError.failed(`the ${name} converter could not load: ${describeCause(cause)}`)
  })

const pdf = load("PDF", () => import("./PdfMarkdown.ts"))
const docx = load("DOCX", () => import("./DocxMarkdown.ts"))
const office = load("office document", () => import("./OfficeMarkdown.ts"))
const html = load("HTML", () => import("./HtmlMarkdown.ts"))

export const documentToMarkdown = (type: FileType, bytes: Uint8Array): Effect.Effect<ParsedFile, ParserError> => {
  if (type === "pdf") return Effect.flatMap(pdf, ({ pdfToMarkdown }) => pdfToMarkdown(bytes))
  if (type === "docx") return Effect.flatMap(docx, ({ docxToMarkdown }) => docxToMarkdown(bytes))
  if (officeTypes.has(type)) return Effect.flatMap(office, ({ officeToMarkdown }) => officeToMarkdown(bytes, type))
  if (type === "html") {
    return Effect.flatMap(html, ({ htmlToMarkdown }) => {
      const text = decodeText(bytes)
      return text === undefined
        ? Effect.fail(ParserError.failed("the HTML is not UTF-8 text"))
        : Effect.sync(() => ({ markdown: htmlToMarkdown(text) }))
    })
  }
  return Effect.fail(ParserError.unsupported(`does not read ${type}`))
}

/**
 * Loads every converter and pdf.js now: a document worker does it before it says it is ready, so a conversion's
 * time limit covers only the conversion.
 */
export const loadConverters: Effect.Effect<void, ParserError> = Effect.all([pdf, docx, office, html]).pipe(
  Effect.flatMap(([{ loadPdfJs }]) => loadPdfJs)
)
