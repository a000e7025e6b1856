/**
 * PDF to markdown with unpdf (a serverless build of pdf.js): positioned text items are grouped into lines, lines
 * into paragraphs by vertical spacing, and lines set larger than the body text become `#` headings ranked by
 * size. Bullets and numbered items become list items, hyphenated line breaks are rejoined, lone page numbers
 * are dropped, and a paragraph cut by a page break is joined again. A PDF without a text layer (a scan) fails,
 * so a chain can fall through to another parser.
 */
import { Effect } from "effect"
import { extractTextItems, getDocumentProxy, getResolvedPDFJS } from "unpdf"
import type { StructuredTextItem } from "unpdf"
import { describeCause, type ParsedFile, ParserError } from "../FileParser.ts"

interface Line {
  readonly text: string
  readonly y: number
  readonly fontSize: number
}

type Block =
  | { readonly kind: "heading"; readonly fontSize: number; text: string }
  | { readonly kind: "paragraph"; text: string; lastY: number; readonly fontSize: number }
  | { readonly kind: "item"; readonly marker: string; text: string; lastY: number; readonly fontSize: number }

const sameSize = (a: number, b: number) => Math.abs(a - b) <= Math.max(a, b) * 0.1

/** Lines in content-stream order; a new line starts where the baseline moves or pdf.js saw an end of line. */
const toLines = (items: ReadonlyArray<StructuredTextItem>): Array<Line> => {
  const lines: Array<Line> = []
  let text = ""
  let y = 0
  let fontSize = 0
  let lastEnd: number | undefined
  let endOfLine = false
  const flush = () => {
    const trimmed = text.replace(/\s+/g, " ").trim()
    if (trimmed !== "") lines.push({ text: trimmed, y, fontSize })
    text = ""
    fontSize = 0
    lastEnd = undefined
  }
  for (const item of items) {
    const size = item.fontSize > 0 ? item.fontSize : item.height
    if (item.str !== "") {
      const moved = text !== "" && Math.abs(item.y - y) > Math.max(size, fontSize, 1) * 0.5
      if (moved || endOfLine) flush()
      if (text === "") {
        y = item.y
      } else if (
        lastEnd !== undefined && item.x - lastEnd > size * 0.15 && !/\s$/.test(text) && !/^\s/.test(item.str)
      ) {
        text += " "
      }
      text += item.str
      fontSize = Math.max(fontSize, size)
      lastEnd = item.x + item.width
      endOfLine = false
    }
    if (item.hasEOL) endOfLine = true
  }
  flush()
  return lines
}

/** The size most characters are set in: the body text, against which headings are measured. */
const bodySize = (pages: ReadonlyArray<ReadonlyArray<Line>>) => {
  const weights = new Map<number, number>()
  for (const line of pages.flat()) {
    const size = Math.round(line.fontSize * 2) / 2
    weights.set(size, (weights.get(size) ?? 0) + line.text.length)
  }
  let best = 0
  let weight = -1
  for (const [size, total] of weights) {
    if (total > weight) {
      best = size
      weight = total
    }
  }
  return best
}

const bullet = /^([•◦▪▫●○■□‣⁃∙·*–-])\s+(.*)$/u
const numbered = /^(\d{1,3}[.)])\s+(.*)$/

const joinLine = (previous: string, next: string) =>
  /[A-Za-z]-$/.test(previous) && /^[a-z]/.test(next) ? `${previous.slice(0, -1)}${next}` : `${previous} ${next}`

const isPageNumber = (line: Line, index: number, count: number) =>
  (index === 0 || index === count - 1) && /^(page\s+)?\d{1,4}(\s*(of|\/)\s*\d{1,4})?$/i.test(line.text)

const toBlocks = (lines: ReadonlyArray<Line>, body: number): Array<Block> => {
  const blocks: Array<Block> = []
  lines.forEach((line, index) => {
    if (isPageNumber(line, index, lines.length)) return
    const last = blocks.at(-1)
    const isHeading = body > 0 && line.fontSize >= body * 1.15 && line.text.length <= 160
    if (isHeading) {
      if (last?.kind === "heading" && sameSize(last.fontSize, line.fontSize)) last.text = `${last.text} ${line.text}`
      else blocks.push({ kind: "heading", fontSize: line.fontSize, text: line.text })
      return
    }
    const listMatch = bullet.exec(line.text) ?? numbered.exec(line.text)
    if (listMatch !== null) {
      const marker = /^\d/.test(listMatch[1]!) ? listMatch[1]!.replace(")", ".") : "-"
      blocks.push({ kind: "item", marker, text: listMatch[2]!, lastY: line.y, fontSize: line.fontSize })
      return
    }
    const continues = (last?.kind === "paragraph" || last?.kind === "item") && sameSize(last.fontSize, line.fontSize) &&
      last.lastY - line.y > 0 && last.lastY - line.y <= line.fontSize * 1.6
    if (continues) {
      last.text = joinLine(last.text, line.text)
      last.lastY = line.y
    } else {
      blocks.push({ kind: "paragraph", text: line.text, lastY: line.y, fontSize: line.fontSize })
    }
  })
  return blocks
}

/** A leading `#`, `>` or list marker in plain text would change its meaning in markdown. */
const escapeStart = (text: string) => text.replace(/^([#>]|[-+*]\s|\d+[.)]\s)/, "\\$1")

export const layoutPdf = (pages: ReadonlyArray<ReadonlyArray<StructuredTextItem>>): string => {
  const pageLines = pages.map(toLines)
  const body = bodySize(pageLines)
  const blocks: Array<Block> = []
  for (const page of pageLines) {
    const pageBlocks = toBlocks(page, body)
    const last = blocks.at(-1)
    const first = pageBlocks[0]
    // A sentence that runs over the page break: no closing punctuation before, a lowercase word after.
    if (
      last?.kind === "paragraph" && first?.kind === "paragraph" && sameSize(last.fontSize, first.fontSize) &&
      !/[.!?:;"”)]$/.test(last.text) && /^[a-z]/.test(first.text)
    ) {
      last.text = joinLine(last.text, first.text)
      pageBlocks.shift()
    }
    blocks.push(...pageBlocks)
  }
  const headingSizes = [
    ...new Set(blocks.flatMap((block) => block.kind === "heading" ? [Math.round(block.fontSize)] : []))
  ]
    .sort((a, b) => b - a)
  const render = (block: Block) => {
    if (block.kind === "heading") {
      return `${"#".repeat(Math.min(6, headingSizes.indexOf(Math.round(block.fontSize)) + 1))} ${block.text}`
    }
    if (block.kind === "item") return `${block.marker} ${block.text}`
    return escapeStart(block.text)
  }
  // Consecutive list items form one list, so no blank line between them.
  return blocks
    .map((block, index) =>
      `${index === 0 ? "" : block.kind === "item" && blocks[index - 1]?.kind === "item" ? "\n" : "\n\n"}${
        render(block)
      }`
    )
    .join("")
    .trim()
}

/** unpdf imports pdf.js on first use; a worker loads it up front so no conversion pays for it. */
export const loadPdfJs: Effect.Effect<void> = Effect.asVoid(Effect.promise(() => getResolvedPDFJS()))

export const pdfToMarkdown = Effect.fnUntraced(function*(bytes: Uint8Array) {
  const unreadable = (cause: unknown) => ParserError.failed(`not a readable PDF: ${describeCause(cause)}`)
  const pages = yield* Effect.acquireUseRelease(
    // pdf.js takes ownership of (detaches) the buffer it is given, so it gets a copy.
    Effect.tryPromise({ try: () => getDocumentProxy(new Uint8Array(bytes)), catch: unreadable }),
    (document) => Effect.tryPromise({ try: () => extractTextItems(document), catch: unreadable }),
    (document) => Effect.promise(() => document.loadingTask.destroy())
  )
  const markdown = layoutPdf(pages.items)
  if (markdown === "") {
    return yield* ParserError.failed(
      `the PDF has no text layer on its ${pages.totalPages} page(s); scanned PDFs are not OCRed`
    )
  }
  const parsed: ParsedFile = { markdown, pages: pages.totalPages }
  return parsed
})
