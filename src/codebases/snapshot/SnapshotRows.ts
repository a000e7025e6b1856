/** The rows one snapshot stores: files, symbols, impact edges, and chunks with their intelligence. */
import type { FileParse } from "../parse/SyntaxExtractor.ts"
import type { ChunkDraft } from "../intel/Chunker.ts"

export interface FileRow {
  readonly path: string
  readonly language: string
  readonly status: string
  readonly reason: string | null
  readonly role: string
  readonly contentHash: string
  readonly changeKind: string
  readonly lineCount: number
  readonly chunkCount: number
  /** Kept so the next snapshot can reuse it when the file did not change. */
  readonly parse: FileParse | null
  /** The import and call edges that start in this file (stored with it, not as rows of their own). */
  readonly edges: ReadonlyArray<EdgeRow>
}

export interface SymbolRow {
  readonly path: string
  readonly language: string
  readonly name: string
  readonly kind: string
  readonly container: string | null
  readonly fqName: string
  readonly exported: boolean
  readonly startLine: number
  readonly endLine: number
  readonly complexity: number
  readonly pagerank: number
  readonly fanin: number
}

export interface EdgeRow {
  readonly edgeType: "imports" | "calls"
  readonly fromPath: string
  readonly toPath: string | null
  readonly fromSymbol: string | null
  readonly toSymbol: string | null
  readonly targetRef: string
  readonly label: string
}

export interface ChunkRow extends Omit<ChunkDraft, "symbol"> {
  readonly id: string
  readonly symbol: number
  readonly clusterId: string
  readonly clusterLabel: string
  readonly routeTarget: string
  readonly routeSource: string
  readonly autoRouteReason: string
  readonly changeKind: string
  readonly fileRole: string
  readonly significanceScore: number
  readonly significanceComponents: Record<string, unknown>
  readonly complexityScore: number | null
  readonly safetyTags: ReadonlyArray<string>
  readonly pagerankCentrality: number
  readonly faninCount: number
  readonly relatedCount: number
  /** Set on a symbol's chunk (a symbol is stored as its chunk), NULL on a region. */
  readonly symbolExported: boolean | null
  readonly symbolPagerank: number | null
}

export interface SnapshotRows {
  readonly files: ReadonlyArray<FileRow>
  /** Not stored as rows of their own: each symbol is its chunk. Kept for the stats and the artifacts. */
  readonly symbols: ReadonlyArray<SymbolRow>
  /** All of them, in the order found; each file also holds its own. */
  readonly edges: ReadonlyArray<EdgeRow>
  readonly chunks: ReadonlyArray<ChunkRow>
  readonly clusterCount: number
}
