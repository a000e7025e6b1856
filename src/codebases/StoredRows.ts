/**
 * Codebase rows as the read views receive them from the SQL client (column names camel-cased), so each view is
 * checked field by field against the API contract it returns.
 */

/** A `codebase_chunks` row as the SQL client reads it (`itemColumns`, camel-cased). */
export interface StoredChunk {
  readonly id: string
  readonly chunkKey: string
  readonly path: string
  readonly language: string | null
  readonly kind: string
  readonly label: string
  readonly contentText: string
  readonly startLine: number
  readonly endLine: number
  readonly container: string | null
  readonly parentSymbol: string | null
  readonly parentFqName: string | null
  readonly parseConfidence: number
  readonly clusterId: string | null
  readonly clusterLabel: string | null
  readonly routeTarget: string
  readonly routeSource: string | null
  readonly changeKind: string
  readonly relatedCount: number
  readonly documentId: string | null
  readonly significanceScore: number
  readonly significanceComponents: unknown
  readonly fileRole: string
  readonly autoRouteReason: string | null
  readonly complexityScore: number | null
  readonly safetyTags: ReadonlyArray<string> | null
  readonly pagerankCentrality: number | null
  readonly faninCount: number
}

/** A `codebase_files` row as the files list reads it. */
export interface StoredFile {
  readonly path: string
  readonly language: string | null
  readonly status: string
  readonly reason: string | null
  readonly fileRole: string
  readonly contentHash: string
  readonly changeKind: string
  readonly lineCount: number
  readonly chunkCount: number
}

/** A symbol as `symbolColumns` (in `CodebaseReads`) reads it. */
export interface StoredSymbol {
  readonly id: string
  readonly name: string
  readonly kind: string
  readonly fqName: string
  readonly container: string | null
  readonly exported: boolean
  readonly startLine: number
  readonly endLine: number
  readonly complexity: number | null
  readonly pagerank: number | null
  readonly fanin: number
}
