/**
 * A file's parse as `codebase_files.parse` keeps it, so the next snapshot can reuse it for an unchanged file:
 * positional arrays instead of objects (the key names were most of the bytes, and the write of an import is
 * most of its time), and no fully qualified name (it is the container and the name). Parses stored as objects by
 * earlier versions have the same shape as `FileParse` and are read as they are.
 */
import type { SymbolKind } from "./SyntaxRules.ts"
import type { FileParse } from "./SyntaxExtractor.ts"

type PackedSymbol = [
  name: string,
  kind: SymbolKind,
  container: string | null,
  exported: 0 | 1,
  startLine: number,
  endLine: number,
  complexity: number
]
type PackedImport = [specifier: string, label: string | null]
type PackedCall = [callee: string, line: number, caller: number]
type PackedParse = [
  format: 1,
  symbols: Array<PackedSymbol>,
  imports: Array<PackedImport>,
  calls: Array<PackedCall>,
  hasErrors: 0 | 1
]

export const packParse = (parse: FileParse): PackedParse => [
  1,
  parse.symbols.map((s) => [s.name, s.kind, s.container, s.exported ? 1 : 0, s.startLine, s.endLine, s.complexity]),
  parse.imports.map((i) => [i.specifier, i.label === i.specifier ? null : i.label]),
  parse.calls.map((c) => [c.callee, c.line, c.caller]),
  parse.hasErrors ? 1 : 0
]

export const unpackParse = (stored: unknown): FileParse | null => {
  if (stored === null || stored === undefined) return null
  if (!Array.isArray(stored)) return stored as FileParse
  const [, symbols, imports, calls, hasErrors] = stored as PackedParse
  return {
    symbols: symbols.map(([name, kind, container, exported, startLine, endLine, complexity]) => ({
      name,
      kind,
      container,
      fqName: container === null ? name : `${container}.${name}`,
      exported: exported === 1,
      startLine,
      endLine,
      complexity
    })),
    imports: imports.map(([specifier, label]) => ({ specifier, label: label ?? specifier })),
    calls: calls.map(([callee, line, caller]) => ({ callee, line, caller })),
    hasErrors: hasErrors === 1
  }
}
