/**
 * Derived views of a snapshot (behaviour reference §10.6): a symbol card per symbol (signature, purpose from the
 * leading comment or docstring, callers and callees, complexity, safety, centrality), a brief per module, and one
 * repo map (top symbols, cross-module import weights, a summary). Built once per snapshot and stored.
 */
import type { ChunkRow, EdgeRow, FileRow, SymbolRow } from "../snapshot/SnapshotRows.ts"

export interface ArtifactRow {
  readonly kind: "symbol_card" | "module_brief" | "repo_map"
  readonly refId: string
  readonly rank: number
  readonly body: Record<string, unknown>
}

const signatureOf = (lines: ReadonlyArray<string>, start: number, language: string): string => {
  const window = lines.slice(start - 1, start + 5).map((line) => line.trim())
  const pattern = language === "python"
    ? /^(async def |def |class )/
    : /^(export |function |class |const |let |interface |type |async |public |private |protected |static |func |fn |pub |def |impl |struct )/
  const found = window.find((line) => pattern.test(line)) ?? window[0] ?? ""
  return found.replace(/[{:]\s*$/, "").trim().slice(0, 240)
}

const purposeOf = (lines: ReadonlyArray<string>, start: number, end: number, language: string): string => {
  if (language === "python") {
    const body = lines.slice(start, Math.min(end, start + 12)).join("\n")
    const doc = body.match(/^\s*(?:"""|''')([\s\S]*?)(?:"""|''')/)
    if (doc) return doc[1]!.trim().split(/\n\s*\n/)[0]!.replace(/\s+/g, " ").slice(0, 400)
  }
  const comment: Array<string> = []
  for (let line = start - 2; line >= 0 && comment.length < 30; line--) {
    const text = lines[line]!.trim()
    if (/^(\/\/|\/\*|\*|#(?!include)|\/\/\/)/.test(text)) {
      comment.unshift(text.replace(/^(\/\*\*?|\*\/?|\/\/\/?|#)\s?/, "").replace(/\*\/$/, ""))
    } else if (text.startsWith("@")) continue
    else break
  }
  return comment.join(" ").replace(/\s+/g, " ").trim().slice(0, 400)
}

export const moduleOf = (path: string): string => {
  const parts = path.split("/")
  if (parts.length >= 3) return `${parts[0]}/${parts[1]}`
  if (parts.length === 2) return parts[0]!
  return parts[0]!.replace(/\.[^.]+$/, "")
}

export const buildArtifacts = (
  files: ReadonlyArray<FileRow>,
  texts: ReadonlyMap<string, ReadonlyArray<string>>,
  symbols: ReadonlyArray<SymbolRow>,
  edges: ReadonlyArray<EdgeRow>,
  chunks: ReadonlyArray<ChunkRow>
): Array<ArtifactRow> => {
  const calls = edges.filter((edge) => edge.edgeType === "calls")
  const callers = new Map<string, Map<string, number>>()
  const callees = new Map<string, Map<string, number>>()
  const bump = (map: Map<string, Map<string, number>>, key: string, other: string) => {
    const inner = map.get(key) ?? new Map<string, number>()
    inner.set(other, (inner.get(other) ?? 0) + 1)
    map.set(key, inner)
  }
  for (const edge of calls) {
    bump(callers, edge.toSymbol!, edge.fromSymbol!)
    bump(callees, edge.fromSymbol!, edge.toSymbol!)
  }
  const top5 = (map: Map<string, number> | undefined) =>
    [...(map ?? new Map<string, number>())].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5).map((
      [name]
    ) => name)
  const bestChunk = new Map<string, ChunkRow>()
  for (const chunk of chunks) {
    const key = `${chunk.path}\u0000${chunk.parentFqName ?? chunk.label}`
    const best = bestChunk.get(key)
    if (best === undefined || chunk.significanceScore > best.significanceScore) bestChunk.set(key, chunk)
  }
  const byFq = new Map<string, SymbolRow>()
  for (const symbol of symbols) if (!byFq.has(symbol.fqName)) byFq.set(symbol.fqName, symbol)
  const cards = [...byFq.values()].map((symbol) => {
    const lines = texts.get(symbol.path) ?? []
    const chunk = bestChunk.get(`${symbol.path}\u0000${symbol.fqName}`)
    return {
      fq_name: symbol.fqName,
      name: symbol.name,
      kind: symbol.kind,
      language: symbol.language,
      path: symbol.path,
      start_line: symbol.startLine,
      end_line: symbol.endLine,
      signature: signatureOf(lines, symbol.startLine, symbol.language),
      purpose: purposeOf(lines, symbol.startLine, symbol.endLine, symbol.language),
      top_callers: top5(callers.get(symbol.fqName)),
      top_callees: top5(callees.get(symbol.fqName)),
      cyclomatic_complexity: symbol.complexity,
      nloc: symbol.endLine - symbol.startLine + 1,
      safety_tags: chunk?.safetyTags ?? [],
      pagerank: symbol.pagerank,
      fanin: symbol.fanin,
      significance_score: chunk?.significanceScore ?? 0,
      cluster_id: chunk?.clusterId ?? null,
      chunk_key: chunk?.chunkKey ?? null,
      chunk_id: chunk?.id ?? null,
      change_kind: chunk?.changeKind ?? null,
      exported: symbol.exported
    }
  }).sort((a, b) =>
    0.6 * b.pagerank + 0.4 * b.significance_score - (0.6 * a.pagerank + 0.4 * a.significance_score) ||
    (a.fq_name < b.fq_name ? -1 : 1)
  ).slice(0, 200)

  const fileRole = new Map(files.map((file) => [file.path, file]))
  const modules = new Map<string, { files: Array<FileRow>; cards: Array<(typeof cards)[number]> }>()
  for (const file of files) {
    if (file.chunkCount === 0) continue
    const entry = modules.get(moduleOf(file.path)) ?? { files: [], cards: [] }
    entry.files.push(file)
    modules.set(moduleOf(file.path), entry)
  }
  for (const card of cards) modules.get(moduleOf(card.path))?.cards.push(card)
  const moduleEdges = new Map<string, number>()
  for (const edge of edges) {
    if (edge.edgeType !== "imports" || edge.toPath === null) continue
    const from = moduleOf(edge.fromPath)
    const to = moduleOf(edge.toPath)
    if (from !== to) moduleEdges.set(`${from}\u0000${to}`, (moduleEdges.get(`${from}\u0000${to}`) ?? 0) + 1)
  }
  const dominant = (values: ReadonlyArray<string>) => {
    const counts = new Map<string, number>()
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
    return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null
  }
  const briefs = [...modules].map(([module, entry]) => {
    const languages = [...new Set(entry.files.map((file) => file.language))].sort()
    const purpose = entry.cards.find((card) => card.purpose.length > 20)?.purpose.slice(0, 200) ??
      `Module containing ${entry.files.length} files (${languages.join(", ")}).`
    const dependencies = [...moduleEdges].filter(([key]) => key.startsWith(`${module}\u0000`)).map(([key]) =>
      key.split("\u0000")[1]!
    )
    const consumers = [...moduleEdges].filter(([key]) => key.endsWith(`\u0000${module}`)).map(([key]) =>
      key.split("\u0000")[0]!
    )
    return {
      module,
      purpose,
      public_surface: entry.cards.filter((card) => card.exported).slice(0, 10).map((card) => card.fq_name),
      internal_dependencies: dependencies.sort().slice(0, 25),
      external_consumers: consumers.sort().slice(0, 25),
      top_symbols: entry.cards.slice(0, 3).map((card) => card.fq_name),
      file_count: entry.files.length,
      dominant_language: dominant(entry.files.map((file) => file.language)),
      dominant_role: dominant(entry.files.map((file) => fileRole.get(file.path)!.role))
    }
  }).sort((a, b) =>
    b.public_surface.length - a.public_surface.length || b.file_count - a.file_count || (a.module < b.module ? -1 : 1)
  )
    .slice(0, 60)

  const complexities = symbols.map((symbol) => symbol.complexity).sort((a, b) => a - b)
  const safety: Record<string, number> = {}
  for (const chunk of chunks) for (const tag of chunk.safetyTags) safety[tag] = (safety[tag] ?? 0) + 1
  const languages: Record<string, number> = {}
  for (const file of files) if (file.chunkCount > 0) languages[file.language] = (languages[file.language] ?? 0) + 1
  const repoMap = {
    top_symbols: cards.slice(0, 100).map((card) => ({
      fq_name: card.fq_name,
      name: card.name,
      kind: card.kind,
      language: card.language,
      path: card.path,
      start_line: card.start_line,
      signature: card.signature,
      pagerank: card.pagerank,
      fanin: card.fanin,
      safety_tags: card.safety_tags
    })),
    module_edges: [...moduleEdges].sort((a, b) => b[1] - a[1]).slice(0, 150).map(([key, weight]) => {
      const [from, to] = key.split("\u0000")
      return { from, to, weight }
    }),
    summary: {
      total_files: files.length,
      languages,
      safety_summary: safety,
      complexity: {
        max_cyclomatic: complexities[complexities.length - 1] ?? 0,
        p95_cyclomatic: complexities.length === 0
          ? 0
          : complexities[Math.max(0, Math.ceil(0.95 * complexities.length) - 1)],
        samples: complexities.length
      }
    }
  }
  return [
    ...cards.map((card, rank): ArtifactRow => ({ kind: "symbol_card", refId: card.fq_name, rank, body: card })),
    ...briefs.map((brief, rank): ArtifactRow => ({ kind: "module_brief", refId: brief.module, rank, body: brief })),
    { kind: "repo_map", refId: "snapshot", rank: 0, body: repoMap }
  ]
}
