/** How each snapshot row maps onto its table's columns, for `bulkInsert`. */
import type { ArtifactRow } from "../intel/Artifacts.ts"
import type { BulkColumn } from "./BulkInsert.ts"
import { packComponents } from "../intel/Significance.ts"
import { packParse } from "../parse/StoredParse.ts"
import { packEdges } from "./StoredEdges.ts"
import type { ChunkRow, FileRow } from "./SnapshotRows.ts"

export const fileColumns: ReadonlyArray<BulkColumn<FileRow>> = [
  { column: "path", type: "text", value: (f) => f.path },
  { column: "language", type: "text", value: (f) => f.language },
  { column: "status", type: "text", value: (f) => f.status },
  { column: "reason", type: "text", value: (f) => f.reason },
  { column: "file_role", type: "text", value: (f) => f.role },
  { column: "content_hash", type: "text", value: (f) => f.contentHash },
  { column: "change_kind", type: "text", value: (f) => f.changeKind },
  { column: "line_count", type: "int", value: (f) => f.lineCount },
  { column: "chunk_count", type: "int", value: (f) => f.chunkCount },
  { column: "parse", type: "json", value: (f) => f.parse === null ? null : packParse(f.parse) },
  { column: "edges", type: "json", value: (f) => packEdges(f.edges) }
]

export const chunkColumns: ReadonlyArray<BulkColumn<ChunkRow>> = [
  { column: "id", type: "text", value: (c) => c.id },
  { column: "chunk_key", type: "text", value: (c) => c.chunkKey },
  { column: "path", type: "text", value: (c) => c.path },
  { column: "language", type: "text", value: (c) => c.language },
  { column: "kind", type: "text", value: (c) => c.kind },
  { column: "label", type: "text", value: (c) => c.label },
  { column: "container", type: "text", value: (c) => c.container },
  { column: "parent_symbol", type: "text", value: (c) => c.parentSymbol },
  { column: "parent_fq_name", type: "text", value: (c) => c.parentFqName },
  { column: "start_line", type: "int", value: (c) => c.startLine },
  { column: "end_line", type: "int", value: (c) => c.endLine },
  { column: "content_text", type: "text", value: (c) => c.contentText },
  { column: "content_hash", type: "text", value: (c) => c.contentHash },
  { column: "parse_confidence", type: "real", value: (c) => c.parseConfidence },
  { column: "cluster_id", type: "text", value: (c) => c.clusterId },
  { column: "cluster_label", type: "text", value: (c) => c.clusterLabel },
  { column: "route_target", type: "text", value: (c) => c.routeTarget },
  { column: "route_source", type: "text", value: (c) => c.routeSource },
  { column: "auto_route_reason", type: "text", value: (c) => c.autoRouteReason },
  { column: "change_kind", type: "text", value: (c) => c.changeKind },
  { column: "related_count", type: "int", value: (c) => c.relatedCount },
  { column: "significance_score", type: "real", value: (c) => c.significanceScore },
  { column: "significance_components", type: "json", value: (c) => packComponents(c.significanceComponents) },
  { column: "file_role", type: "text", value: (c) => c.fileRole },
  { column: "complexity_score", type: "real", value: (c) => c.complexityScore },
  { column: "safety_tags", type: "text[]", value: (c) => c.safetyTags },
  { column: "pagerank_centrality", type: "real", value: (c) => c.pagerankCentrality },
  { column: "fanin_count", type: "int", value: (c) => c.faninCount },
  { column: "symbol_exported", type: "boolean", value: (c) => c.symbolExported },
  { column: "symbol_pagerank", type: "real", value: (c) => c.symbolPagerank }
]

export const artifactColumns: ReadonlyArray<BulkColumn<ArtifactRow>> = [
  { column: "kind", type: "text", value: (a) => a.kind },
  { column: "ref_id", type: "text", value: (a) => a.refId },
  { column: "rank", type: "int", value: (a) => a.rank },
  { column: "body", type: "jsonb", value: (a) => a.body }
]
