/**
 * Cuts a file into chunks (behaviour reference §9.4): one chunk per symbol (nested symbols overlap their
 * container's chunk), and region chunks for the non-blank lines no symbol covers, split every 80 lines. Stored
 * text carries a `# path  lines a-b` header so a recalled chunk names its source; `chunk_key` is stable across
 * snapshots, so routes and memories carry over for chunks that did not change.
 */
import { createHash } from "node:crypto"
import type { ParsedSymbol } from "../parse/SyntaxExtractor.ts"

export interface ChunkDraft {
  readonly chunkKey: string
  readonly path: string
  readonly language: string
  readonly kind: string
  readonly label: string
  readonly container: string | null
  readonly parentSymbol: string | null
  readonly parentFqName: string | null
  readonly startLine: number
  readonly endLine: number
  readonly contentText: string
  readonly contentHash: string
  readonly parseConfidence: number
  /** Index of the symbol in the file's symbol list, -1 for a region. */
  readonly symbol: number
}

const regionLines = 80

export const sha1 = (text: string) => createHash("sha1").update(text).digest("hex")
export const sha256 = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")

const previewLength = 220

/** What a chunk list shows of a chunk: the head of its text, whitespace collapsed (derived on read, not stored). */
export const previewOf = (text: string): string => {
  // Only the head matters: once a long chunk's collapsed head is longer than the preview, the rest cannot change it.
  for (let size = 4096; size < text.length; size *= 4) {
    const head = text.slice(0, size).replace(/\s+/g, " ").trimStart()
    if (head.length > previewLength + 1) return `${head.slice(0, previewLength)}...`
  }
  const collapsed = text.replace(/\s+/g, " ").trim()
  return collapsed.length <= previewLength ? collapsed : `${collapsed.slice(0, previewLength)}...`
}

export const chunkFile = (
  path: string,
  language: string,
  lines: ReadonlyArray<string>,
  symbols: ReadonlyArray<ParsedSymbol>
): Array<ChunkDraft> => {
  const make = (
    kind: string,
    label: string,
    start: number,
    end: number,
    confidence: number,
    symbol: number
  ): ChunkDraft => {
    const body = lines.slice(start - 1, end).join("\n").trim()
    const contentText = `# ${path}  lines ${start}-${end}\n${body}`
    const owner = symbol >= 0 ? symbols[symbol]! : undefined
    return {
      chunkKey: sha1(`${path}|${kind}|${label}|${start}|${end}`).slice(0, 24),
      path,
      language,
      kind,
      label,
      container: owner?.container ?? null,
      parentSymbol: owner?.name ?? null,
      parentFqName: owner?.fqName ?? null,
      startLine: start,
      endLine: end,
      contentText,
      contentHash: sha256(contentText),
      parseConfidence: confidence,
      symbol
    }
  }
  const order = symbols.map((_, index) => index).sort((a, b) =>
    symbols[a]!.startLine - symbols[b]!.startLine || symbols[a]!.endLine - symbols[b]!.endLine ||
    (symbols[a]!.fqName < symbols[b]!.fqName ? -1 : 1)
  )
  const chunks = order.map((index) => {
    const symbol = symbols[index]!
    return make(symbol.kind, symbol.fqName, symbol.startLine, Math.min(symbol.endLine, lines.length), 1, index)
  })
  const covered = new Uint8Array(lines.length + 2)
  for (const symbol of symbols) {
    for (let line = symbol.startLine; line <= Math.min(symbol.endLine, lines.length); line++) {
      covered[line] = 1
    }
  }
  const name = path.slice(path.lastIndexOf("/") + 1)
  const confidence = symbols.length > 0 ? 0.72 : 0.55
  let section = 0
  let runStart = -1
  let runEnd = -1
  const flush = () => {
    if (runStart < 0) return
    for (let start = runStart; start <= runEnd; start += regionLines) {
      section++
      chunks.push(
        make("region", `${name} section ${section}`, start, Math.min(runEnd, start + regionLines - 1), confidence, -1)
      )
    }
    runStart = -1
  }
  for (let line = 1; line <= lines.length; line++) {
    const free = covered[line] === 0
    if (free && lines[line - 1]!.trim() !== "") {
      if (runStart < 0) runStart = line
      runEnd = line
    } else if (!free) flush()
  }
  flush()
  return chunks
}
