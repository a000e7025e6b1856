/**
 * The second half of building a snapshot, once every indexed file has a parse: resolved import and call edges,
 * symbol PageRank and fan-in, clusters by community detection over the file graph, chunks with their code
 * intelligence, auto-routes (inherited for unchanged chunks) and related-chunk counts. Pure; storing the result is
 * `CodebaseStore`'s job. This file is long because it is one pass over shared indexes. It is written as sliced work
 * (`Sliced.ts`) that yields between steps and every few dozen files or chunks: in one piece it held the event loop
 * for about 400 ms on this repository's `src/` (542 files), and every request of every bank waited (`bench/isolation.ts`,
 * phase 4).
 */
import { every, runWhole, type Sliced } from "../../brain/Sliced.ts"
import type { FileParse, ParsedSymbol } from "../parse/SyntaxExtractor.ts"
import { makeImportResolver } from "../graph/ImportResolver.ts"
import { louvainSteps, type UndirectedEdge } from "../graph/Communities.ts"
import { normalise, pageRank, type WeightedEdge } from "../graph/PageRank.ts"
import { type ChunkDraft, chunkFile, sha1 } from "../intel/Chunker.ts"
import { exportness, round4, safetyTags, significance, type TriageSettings } from "../intel/Significance.ts"
import type { PlannedFile } from "./SnapshotPlan.ts"
import type { ChunkRow, EdgeRow, FileRow, SnapshotRows, SymbolRow } from "./SnapshotRows.ts"

export interface AssemblyInput {
  readonly snapshotId: string
  readonly files: ReadonlyArray<PlannedFile>
  readonly parses: ReadonlyMap<string, FileParse>
  readonly parseFailures: ReadonlyMap<string, string>
  readonly deletedPaths: ReadonlyArray<string>
  readonly previousRoutes: ReadonlyMap<string, { readonly contentHash: string; readonly routeTarget: string }>
  readonly settings: TriageSettings
  /** Each file's text split into lines, once for the whole build (chunking, line counts and artifacts share it). */
  readonly lines: ReadonlyMap<string, ReadonlyArray<string>>
}

interface GlobalSymbol {
  readonly path: string
  readonly language: string
  readonly symbol: ParsedSymbol
}

const symbolKinds = new Set(["class", "interface", "function", "method"])

export const assembleSnapshot = (input: AssemblyInput): SnapshotRows => runWhole(assemblingSnapshot(input))

export function* assemblingSnapshot(input: AssemblyInput): Sliced<SnapshotRows> {
  const { snapshotId, settings } = input
  const pause = every(25)
  const indexed = input.files.filter((file) => file.status === "indexed" && input.parses.has(file.path))
  const resolver = makeImportResolver(indexed.map((file) => file.path))

  // Symbols, numbered over the whole snapshot.
  const symbols: Array<GlobalSymbol> = []
  const symbolsOfFile = new Map<string, Array<number>>()
  for (const file of indexed) {
    if (pause()) yield
    const list: Array<number> = []
    for (const symbol of input.parses.get(file.path)!.symbols) {
      list.push(symbols.length)
      symbols.push({ path: file.path, language: file.language, symbol })
    }
    symbolsOfFile.set(file.path, list)
  }

  // Import edges between files.
  const edges: Array<EdgeRow> = []
  const importsOf = new Map<string, Set<string>>()
  for (const file of indexed) {
    if (pause()) yield
    const targets = new Set<string>()
    for (const found of input.parses.get(file.path)!.imports) {
      const toPath = resolver.resolve(file.path, file.language, found.specifier)
      if (toPath === file.path) continue
      if (toPath !== null) {
        if (targets.has(toPath)) continue
        targets.add(toPath)
      }
      edges.push({
        edgeType: "imports",
        fromPath: file.path,
        toPath,
        fromSymbol: null,
        toSymbol: null,
        targetRef: found.specifier,
        label: found.label
      })
    }
    importsOf.set(file.path, targets)
  }

  // Call edges: same file, then a file it imports, then a name unique in the snapshot (§10.2).
  const byName = new Map<string, Array<number>>()
  symbols.forEach((entry, index) => {
    const list = byName.get(entry.symbol.name) ?? []
    list.push(index)
    byName.set(entry.symbol.name, list)
  })
  const graphEdges: Array<WeightedEdge> = []
  const fanin = new Int32Array(symbols.length)
  const fileLinks = new Map<string, number>()
  const linkFiles = (a: string, b: string, weight: number) => {
    if (a === b) return
    const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`
    fileLinks.set(key, (fileLinks.get(key) ?? 0) + weight)
  }
  const callPairs = new Set<string>()
  for (const file of indexed) {
    if (pause()) yield
    const own = symbolsOfFile.get(file.path)!
    const imported = importsOf.get(file.path)!
    for (const call of input.parses.get(file.path)!.calls) {
      const candidates = byName.get(call.callee)
      if (candidates === undefined) continue
      const target = candidates.find((index) => symbols[index]!.path === file.path) ??
        candidates.find((index) => imported.has(symbols[index]!.path)) ??
        (candidates.length === 1 ? candidates[0] : undefined)
      if (target === undefined) continue
      const caller = call.caller >= 0 ? own[call.caller]! : -1
      if (caller === target) continue
      linkFiles(file.path, symbols[target]!.path, 0.5)
      if (caller < 0) continue
      graphEdges.push({ from: caller, to: target, weight: 1 })
      fanin[target]! += 1
      const pair = `${caller}:${target}`
      if (callPairs.has(pair)) continue
      callPairs.add(pair)
      edges.push({
        edgeType: "calls",
        fromPath: file.path,
        toPath: symbols[target]!.path,
        fromSymbol: symbols[caller]!.symbol.fqName,
        toSymbol: symbols[target]!.symbol.fqName,
        targetRef: call.callee,
        label: `${symbols[caller]!.symbol.fqName} -> ${symbols[target]!.symbol.fqName}`
      })
    }
  }
  for (const [from, targets] of importsOf) {
    for (const to of targets) {
      linkFiles(from, to, 1)
      for (const a of symbolsOfFile.get(from)!.slice(0, 8)) {
        for (const b of (symbolsOfFile.get(to) ?? []).slice(0, 8)) graphEdges.push({ from: a, to: b, weight: 0.25 })
      }
    }
  }
  yield
  const symbolRank = normalise(pageRank(symbols.length, graphEdges))
  yield
  const rawFileRank = new Map<string, number>()
  symbols.forEach((entry, index) =>
    rawFileRank.set(entry.path, (rawFileRank.get(entry.path) ?? 0) + symbolRank[index]!)
  )
  const rankedPaths = [...rawFileRank.keys()]
  const fileRankValues = normalise(rankedPaths.map((path) => rawFileRank.get(path)!))
  const fileRank = new Map(rankedPaths.map((path, index) => [path, fileRankValues[index]!]))

  // Clusters: Louvain communities of the file graph (imports and calls); unconnected files stand alone.
  const chunkedFiles = input.files.filter((file) => file.status === "indexed" || file.status === "retained")
  const fileIndex = new Map(chunkedFiles.map((file, index) => [file.path, index]))
  const undirected: Array<UndirectedEdge> = []
  for (const [key, weight] of fileLinks) {
    const [a, b] = key.split("\u0000") as [string, string]
    const ia = fileIndex.get(a)
    const ib = fileIndex.get(b)
    if (ia !== undefined && ib !== undefined) undirected.push({ a: ia, b: ib, weight })
  }
  yield
  const community = yield* louvainSteps(chunkedFiles.length, undirected)
  const members = new Map<number, Array<string>>()
  chunkedFiles.forEach((file, index) => {
    const list = members.get(community[index]!) ?? []
    list.push(file.path)
    members.set(community[index]!, list)
  })
  const clusterOfFile = new Map<string, { id: string; label: string }>()
  for (const paths of members.values()) {
    const central = [...paths].sort((a, b) => (fileRank.get(b) ?? 0) - (fileRank.get(a) ?? 0) || (a < b ? -1 : 1))[0]!
    const topIndex = [...(symbolsOfFile.get(central) ?? [])].sort((a, b) => symbolRank[b]! - symbolRank[a]!)[0]
    const top = topIndex === undefined ? undefined : symbols[topIndex]
    const directory = central.includes("/") ? central.slice(0, central.lastIndexOf("/")) : central
    const cluster = {
      id: sha1(`cluster|${central}`).slice(0, 16),
      label: paths.length === 1
        ? central
        : `${directory} (${top?.symbol.name ?? central.slice(central.lastIndexOf("/") + 1)}, ${paths.length} files)`
    }
    for (const path of paths) clusterOfFile.set(path, cluster)
  }

  // Chunks with their code intelligence.
  const globalSymbolIndex = new Map<string, number>()
  for (const [path, list] of symbolsOfFile) {
    list.forEach((index, local) => globalSymbolIndex.set(`${path}\u0000${local}`, index))
  }
  const drafts: Array<{ readonly draft: ChunkDraft; readonly file: PlannedFile }> = []
  for (const file of chunkedFiles) {
    if (pause()) yield
    const parse = input.parses.get(file.path)
    for (const draft of chunkFile(file.path, file.language, input.lines.get(file.path) ?? [""], parse?.symbols ?? [])) {
      drafts.push({ draft, file })
    }
  }
  yield
  const representative = new Map<string, string>()
  for (
    const { draft, file } of [...drafts].sort((x, y) =>
      Number(symbolKinds.has(y.draft.kind)) - Number(symbolKinds.has(x.draft.kind)) ||
      (x.draft.path < y.draft.path ? -1 : x.draft.path > y.draft.path ? 1 : x.draft.startLine - y.draft.startLine)
    )
  ) {
    const cluster = clusterOfFile.get(file.path)!.id
    if (!representative.has(cluster)) representative.set(cluster, draft.chunkKey)
  }
  // Related chunks (not stored; the chunk detail derives them the same way): the chunks next to it in its file,
  // and the first four chunks of each file its file imports or is imported by. Counted before the rows are built.
  const ids = drafts.map(({ draft }) => sha1(`${snapshotId}|${draft.chunkKey}`).slice(0, 24))
  const chunksOfFile = new Map<string, number>()
  for (const { draft } of drafts) chunksOfFile.set(draft.path, (chunksOfFile.get(draft.path) ?? 0) + 1)
  const neighbours = new Map<string, Set<string>>()
  const neighbour = (a: string, b: string) => {
    const set = neighbours.get(a) ?? new Set<string>()
    set.add(b)
    neighbours.set(a, set)
  }
  for (const [from, targets] of importsOf) {
    for (const to of targets) {
      neighbour(from, to)
      neighbour(to, from)
    }
  }
  const neighbourChunks = new Map(
    [...neighbours].map(([path, set]) => [
      path,
      [...set].reduce((sum, other) => sum + Math.min(4, chunksOfFile.get(other) ?? 0), 0)
    ])
  )
  const byFile = new Map<string, Array<number>>()
  drafts.forEach(({ draft }, index) => {
    const list = byFile.get(draft.path) ?? []
    list.push(index)
    byFile.set(draft.path, list)
  })
  const related = new Int32Array(drafts.length)
  for (const [path, list] of byFile) {
    list.sort((a, b) => drafts[a]!.draft.startLine - drafts[b]!.draft.startLine || (ids[a]! < ids[b]! ? -1 : 1))
    list.forEach((index, position) => {
      const adjacent = (position > 0 ? 1 : 0) + (position < list.length - 1 ? 1 : 0)
      related[index] = adjacent + (neighbourChunks.get(path) ?? 0)
    })
  }

  yield
  const chunks: Array<ChunkRow> = []
  for (const [index, { draft, file }] of drafts.entries()) {
    if (pause()) yield
    const global = draft.symbol >= 0 ? globalSymbolIndex.get(`${file.path}\u0000${draft.symbol}`) : undefined
    const symbol = global === undefined ? undefined : symbols[global]!.symbol
    const symbolPr = global === undefined ? 0 : symbolRank[global]!
    const filePr = fileRank.get(file.path) ?? 0
    const centrality = Math.max(symbolPr, 0.6 * filePr)
    const tags = settings.enable_safety_scan ? safetyTags(draft.contentText) : []
    const cluster = clusterOfFile.get(file.path)!
    const scored = significance({
      kind: draft.kind,
      lines: draft.endLine - draft.startLine + 1,
      role: file.role,
      exportness: exportness(
        file.language,
        draft.parentSymbol ?? draft.label,
        draft.contentText,
        symbol?.exported ?? null
      ),
      centrality,
      fanin: global === undefined ? 0 : fanin[global]!,
      complexity: symbol?.complexity ?? 1,
      safety: tags,
      representative: representative.get(cluster.id) === draft.chunkKey,
      changeKind: file.changeKind,
      parseConfidence: draft.parseConfidence
    }, settings)
    const previous = input.previousRoutes.get(draft.chunkKey)
    const [routeTarget, routeSource] = previous !== undefined && previous.contentHash === draft.contentHash
      ? [previous.routeTarget, "inherited"]
      : scored.hint === "dismiss" ?
      ["dismissed", "auto_triage_dismiss"]
      : scored.hint === "memory" ?
      ["memory", "auto_triage_memory_pending"]
      : ["unrouted", "auto_triage_review"]
    chunks.push({
      id: ids[index]!,
      ...draft,
      clusterId: cluster.id,
      clusterLabel: cluster.label,
      routeTarget,
      routeSource,
      autoRouteReason: scored.reason,
      changeKind: file.changeKind,
      fileRole: file.role,
      significanceScore: scored.score,
      significanceComponents: scored.components,
      complexityScore: symbol === undefined ? null : symbol.complexity,
      safetyTags: tags,
      pagerankCentrality: round4(symbolPr > 0 ? symbolPr : filePr),
      faninCount: global === undefined ? 0 : fanin[global]!,
      relatedCount: related[index]!,
      symbolExported: symbol === undefined ? null : symbol.exported,
      symbolPagerank: global === undefined ? null : round4(symbolRank[global]!)
    })
  }
  yield

  const symbolRows: Array<SymbolRow> = symbols.map((entry, index) => ({
    path: entry.path,
    language: entry.language,
    name: entry.symbol.name,
    kind: entry.symbol.kind,
    container: entry.symbol.container,
    fqName: entry.symbol.fqName,
    exported: entry.symbol.exported,
    startLine: entry.symbol.startLine,
    endLine: entry.symbol.endLine,
    complexity: entry.symbol.complexity,
    pagerank: round4(symbolRank[index]!),
    fanin: fanin[index]!
  }))
  const edgesFrom = new Map<string, Array<EdgeRow>>()
  for (const edge of edges) {
    const list = edgesFrom.get(edge.fromPath)
    if (list === undefined) edgesFrom.set(edge.fromPath, [edge])
    else list.push(edge)
  }
  const fileRows: Array<FileRow> = input.files.map((file) => ({
    path: file.path,
    language: file.language,
    status: input.parseFailures.has(file.path) ? "retained" : file.status,
    reason: input.parseFailures.has(file.path) ? "parse_error" : file.reason,
    role: file.role,
    contentHash: file.contentHash,
    changeKind: file.changeKind,
    lineCount: input.lines.get(file.path)?.length ?? 0,
    chunkCount: chunksOfFile.get(file.path) ?? 0,
    parse: input.parses.get(file.path) ?? null,
    edges: edgesFrom.get(file.path) ?? []
  }))
  return { files: fileRows, symbols: symbolRows, edges, chunks, clusterCount: members.size }
}
