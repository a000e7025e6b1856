/**
 * PPTX, XLSX, ODT, ODS, ODP, EPUB and RTF to markdown through officeparser's document model: a `## Slide N`
 * section per slide (with its speaker notes), a `## <sheet name>` section holding a pipe table per sheet, and
 * the document's own headings, lists and tables for text documents. Document metadata (YAML front matter) and
 * heading anchors are left out: they are not content a memory should hold.
 */
import { Effect } from "effect"
import { OfficeGenerator, OfficeParser } from "officeparser"
import type { OfficeContentNode, OfficeParserAST, SupportedFileType } from "officeparser"
import { describeCause, type ParsedFile, ParserError } from "../FileParser.ts"
import type { FileType } from "../FileType.ts"

const generatorConfig = { mdConfig: { fallbackToHtml: false, dialect: "github" } } as const

const render = (ast: OfficeParserAST, content: ReadonlyArray<OfficeContentNode>) =>
  Effect.tryPromise({
    try: () => OfficeGenerator.generate({ ...ast, metadata: {}, content: [...content] }, "md", generatorConfig),
    catch: (cause) => ParserError.failed(`markdown generation failed: ${describeCause(cause)}`)
  }).pipe(Effect.map((result) => clean(String(result.value))))

/** Drops front matter, the `---` a slide or sheet opens with, and `{#anchor}` suffixes on headings. */
const clean = (markdown: string) =>
  markdown
    .replace(/^---\n[\s\S]*?\n---\n/, "")
    .replace(/^\s*---\s*\n/, "")
    .replace(/^(#{1,6} .*?)[ \t]*\{#[^}\n]*\}[ \t]*$/gm, "$1")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

/** PowerPoint's notes page carries a slide-number placeholder, which reads as a paragraph holding only a number. */
const isNumberOnly = (node: OfficeContentNode) => /^\s*\d*\s*$/.test(plainText(node))

const plainText = (node: OfficeContentNode): string => node.text ?? (node.children ?? []).map(plainText).join(" ")

const withoutNumberNotes = (node: OfficeContentNode): OfficeContentNode => {
  if (node.notes === undefined) return node
  const notes = node.notes.flatMap((note) => {
    const children = (note.children ?? []).filter((child) => !isNumberOnly(child))
    return children.length === 0 ? [] : [{ ...note, children }]
  })
  return { ...node, notes }
}

const section = Effect.fnUntraced(function*(ast: OfficeParserAST, node: OfficeContentNode, index: number) {
  const body = yield* render(ast, [withoutNumberNotes(node)])
  if (node.type === "slide") {
    const number = (node.metadata as { slideNumber?: number } | undefined)?.slideNumber ?? index + 1
    return `## Slide ${number}\n\n${body}`.trim()
  }
  if (node.type === "sheet") {
    const name = (node.metadata as { sheetName?: string } | undefined)?.sheetName ?? `Sheet ${index + 1}`
    return body === "" ? "" : `## ${name}\n\n${body}`
  }
  return body
})

export const officeToMarkdown = Effect.fnUntraced(function*(bytes: Uint8Array, type: FileType) {
  const ast = yield* Effect.tryPromise({
    try: (signal) =>
      OfficeParser.parseOffice(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
        fileType: type as SupportedFileType,
        ignoreComments: true,
        ignoreSlideMasters: true,
        ignoreHeadersAndFooters: true,
        ignoreInternalLinks: true,
        extractAttachments: false,
        ocr: false,
        abortSignal: signal
      }),
    catch: (cause) => ParserError.failed(`not a readable ${type.toUpperCase()}: ${describeCause(cause)}`)
  })
  const sectioned = ast.content.some((node) => node.type === "slide" || node.type === "sheet")
  const parts = sectioned
    ? yield* Effect.forEach(ast.content, (node, index) => section(ast, node, index))
    : [yield* render(ast, ast.content)]
  const slides = ast.content.filter((node) => node.type === "slide").length
  const parsed: ParsedFile = {
    markdown: parts.filter((part) => part !== "").join("\n\n"),
    ...(slides > 0 ? { pages: slides } : {})
  }
  return parsed
})
