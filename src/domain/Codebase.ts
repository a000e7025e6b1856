/**
 * Codebase request and response schemas (spec "Codebase" resources and the Codebases endpoints). Field names
 * follow the spec exactly; inner objects the spec leaves open (stats, repo map, cards, file items) are open
 * records here too.
 */
import { Schema } from "effect"
import { globLimits, globProblem } from "./Glob.ts"

const Unit = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
/** fnmatch globs (`Glob.ts`), within the limits that keep matching them cheap. */
const Globs = Schema.Array(
  Schema.String.check(Schema.makeFilter((glob: string) => globProblem(glob) ?? true))
).check(Schema.isMaxLength(globLimits.perList))
const Name = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200))
const Open = Schema.Record(Schema.String, Schema.Unknown)

export const ZipImportRequest = Schema.Struct({
  name: Name,
  root_path: Schema.optionalKey(Schema.NullOr(Schema.String)),
  include_globs: Schema.optionalKey(Globs),
  exclude_globs: Schema.optionalKey(Globs),
  refresh_existing: Schema.optionalKey(Schema.Boolean)
})
export type ZipImportRequest = typeof ZipImportRequest.Type

export const FileImportRequest = Schema.Struct({
  name: Name,
  virtual_path: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(1000)))),
  refresh_existing: Schema.optionalKey(Schema.Boolean)
})
export type FileImportRequest = typeof FileImportRequest.Type

export const GitHostImportRequest = Schema.Struct({
  owner: Schema.optionalKey(Schema.NullOr(Schema.String)),
  repo: Schema.optionalKey(Schema.NullOr(Schema.String)),
  ref: Schema.optionalKey(Schema.NullOr(Schema.String)),
  repo_url: Schema.optionalKey(Schema.NullOr(Schema.String)),
  root_path: Schema.optionalKey(Schema.NullOr(Schema.String)),
  include_globs: Schema.optionalKey(Globs),
  exclude_globs: Schema.optionalKey(Globs),
  refresh_existing: Schema.optionalKey(Schema.Boolean)
})
export type GitHostImportRequest = typeof GitHostImportRequest.Type

export const ImportResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  operation_id: Schema.String,
  status: Schema.String,
  resolved_commit_sha: Schema.optionalKey(Schema.String),
  filename: Schema.optionalKey(Schema.String),
  virtual_path: Schema.optionalKey(Schema.String),
  changed_files: Schema.Int,
  added_files: Schema.Int,
  deleted_files: Schema.Int
})

export const RefreshRequest = Schema.Struct({
  ref: Schema.optionalKey(Schema.NullOr(Schema.String)),
  full_rebuild: Schema.optionalKey(Schema.Boolean)
})
export const RefreshResponse = Schema.Struct({
  snapshot_id: Schema.NullOr(Schema.String),
  operation_id: Schema.NullOr(Schema.String),
  status: Schema.String,
  changed_files: Schema.Int,
  added_files: Schema.Int,
  deleted_files: Schema.Int,
  noop: Schema.Boolean
})

export const IngestMode = Schema.Literals(["direct", "retain"])
export const ApproveRequest = Schema.Struct({
  snapshot_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  memory_ingest_mode: Schema.optionalKey(IngestMode)
})
export const ApproveResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  operation_id: Schema.String,
  status: Schema.String,
  memory_ingest_mode: IngestMode
})

export const RouteTarget = Schema.Literals(["memory", "research", "dismissed", "unrouted"])
export const RouteRequest = Schema.Struct({
  item_ids: Schema.Array(Schema.String).check(Schema.isMinLength(1), Schema.isMaxLength(5000)),
  target: RouteTarget,
  queue_memory_import: Schema.optionalKey(Schema.Boolean),
  memory_ingest_mode: Schema.optionalKey(IngestMode)
})

export const ReviewCounts = Schema.Struct({
  unrouted: Schema.Int,
  memory: Schema.Int,
  research: Schema.Int,
  dismissed: Schema.Int
})

export const RouteResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  updated_count: Schema.Int,
  target: RouteTarget,
  operation_id: Schema.NullOr(Schema.String),
  queued_for_memory: Schema.Boolean,
  memory_ingest_mode: IngestMode,
  review_counts: ReviewCounts
})

export const CodebaseResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  name: Schema.String,
  source_type: Schema.String,
  source_config: Open,
  current_snapshot_id: Schema.NullOr(Schema.String),
  approved_snapshot_id: Schema.NullOr(Schema.String),
  source_ref: Schema.NullOr(Schema.String),
  source_commit_sha: Schema.NullOr(Schema.String),
  snapshot_status: Schema.NullOr(Schema.String),
  approved_source_ref: Schema.NullOr(Schema.String),
  approved_source_commit_sha: Schema.NullOr(Schema.String),
  approved_snapshot_status: Schema.NullOr(Schema.String),
  approval_status: Schema.NullOr(Schema.String),
  memory_status: Schema.NullOr(Schema.String),
  stats: Open,
  review_counts: ReviewCounts,
  cluster_count: Schema.Int,
  related_chunk_count: Schema.Int,
  parse_coverage: Schema.Number,
  created_at: Schema.String,
  updated_at: Schema.String,
  snapshot_created_at: Schema.NullOr(Schema.String),
  snapshot_updated_at: Schema.NullOr(Schema.String),
  approved_snapshot_updated_at: Schema.NullOr(Schema.String)
})
export type CodebaseResponse = typeof CodebaseResponse.Type
export const CodebaseList = Schema.Struct({ items: Schema.Array(CodebaseResponse) })

export const ReviewSummary = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.NullOr(Schema.String),
  snapshot_status: Schema.NullOr(Schema.String),
  approval_status: Schema.NullOr(Schema.String),
  memory_status: Schema.NullOr(Schema.String),
  review_counts: ReviewCounts,
  cluster_count: Schema.Int,
  related_chunk_count: Schema.Int,
  parse_coverage: Schema.Number,
  changed_summary: Open,
  diagnostics: Schema.Array(Open)
})

export type ReviewSummary = typeof ReviewSummary.Type
export const ChunkItem = Schema.Struct({
  id: Schema.String,
  chunk_key: Schema.String,
  path: Schema.String,
  language: Schema.NullOr(Schema.String),
  kind: Schema.String,
  label: Schema.String,
  preview_text: Schema.String,
  start_line: Schema.Int,
  end_line: Schema.Int,
  container: Schema.NullOr(Schema.String),
  parent_symbol: Schema.NullOr(Schema.String),
  parent_fq_name: Schema.NullOr(Schema.String),
  parse_confidence: Schema.Number,
  cluster_id: Schema.NullOr(Schema.String),
  cluster_label: Schema.NullOr(Schema.String),
  route_target: Schema.String,
  route_source: Schema.NullOr(Schema.String),
  change_kind: Schema.String,
  related_count: Schema.Int,
  document_id: Schema.NullOr(Schema.String),
  significance_score: Schema.Number,
  significance_components: Schema.NullOr(Open),
  file_role: Schema.String,
  auto_route_reason: Schema.NullOr(Schema.String),
  complexity_score: Schema.NullOr(Schema.Number),
  safety_tags: Schema.Array(Schema.String),
  pagerank_centrality: Schema.NullOr(Schema.Number),
  fanin_count: Schema.Int
})
export type ChunkItem = typeof ChunkItem.Type
export const ChunkPage = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.NullOr(Schema.String),
  items: Schema.Array(ChunkItem),
  next_cursor: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
})
export type ChunkPage = typeof ChunkPage.Type
export const ChunkDetail = Schema.Struct({
  ...ChunkItem.fields,
  snapshot_id: Schema.String,
  content_text: Schema.String,
  related_chunks: Schema.Array(Open),
  symbols: Schema.Array(Open),
  impact_edges: Schema.Array(Open),
  cluster_members: Schema.Array(Open)
})

export type ChunkDetail = typeof ChunkDetail.Type
export const ChunkOrder = Schema.Literals(["significance", "review", "path", "complexity", "pagerank"])

export const FilesResponse = Schema.Struct({
  snapshot_id: Schema.NullOr(Schema.String),
  source_ref: Schema.NullOr(Schema.String),
  source_commit_sha: Schema.NullOr(Schema.String),
  snapshot_status: Schema.NullOr(Schema.String),
  items: Schema.Array(Open)
})
export type FilesResponse = typeof FilesResponse.Type
export const ItemsResponse = Schema.Struct({ items: Schema.Array(Open) })
export type ItemsResponse = typeof ItemsResponse.Type
export const SymbolCardPage = Schema.Struct({
  items: Schema.Array(Open),
  next_cursor: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
})
export type SymbolCardPage = typeof SymbolCardPage.Type
export const RepoMapResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.NullOr(Schema.String),
  generated_at: Schema.NullOr(Schema.String),
  repo_map: Schema.NullOr(Open)
})
export type RepoMapResponse = typeof RepoMapResponse.Type
export const SymbolCardResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  symbol_card: Open
})

export type SymbolCardResponse = typeof SymbolCardResponse.Type
export const ImpactRequest = Schema.Struct({
  path: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1)))),
  symbol: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1)))),
  query: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMinLength(1)))),
  max_depth: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 8 }))),
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })))
})
export type ImpactRequest = typeof ImpactRequest.Type
export const ImpactResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  seed: Schema.Struct({ type: Schema.String, value: Schema.String }),
  impacted_files: Schema.Array(Open),
  matched_symbols: Schema.Array(Open),
  edges: Schema.Array(Open),
  explanation: Schema.String
})

export type ImpactResponse = typeof ImpactResponse.Type
export const CurateRequest = Schema.Struct({
  intent: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2000)),
  scope_hint: Schema.optionalKey(Schema.NullOr(Schema.String)),
  snapshot_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  top_k_clusters: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 }))),
  top_k_symbols: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))),
  include_dismissed: Schema.optionalKey(Schema.Boolean)
})
export type CurateRequest = typeof CurateRequest.Type
export const CurateResponse = Schema.Struct({
  codebase_id: Schema.String,
  snapshot_id: Schema.String,
  intent: Schema.String,
  scope_hint: Schema.NullOr(Schema.String),
  clusters: Schema.Array(Open),
  symbol_cards: Schema.Array(Open),
  unclustered: Schema.Array(Open),
  total_candidates: Schema.Int
})

export type CurateResponse = typeof CurateResponse.Type
export const TriageSettingsBody = Schema.Struct({
  score_threshold_high: Schema.optionalKey(Unit),
  centrality_threshold: Schema.optionalKey(Unit),
  safety_threshold: Schema.optionalKey(Unit),
  embedding_provider: Schema.optionalKey(Schema.String),
  enable_safety_scan: Schema.optionalKey(Schema.Boolean),
  enable_rulescan: Schema.optionalKey(Schema.Boolean),
  rulescan_rulepack: Schema.optionalKey(Schema.NullOr(Schema.String)),
  code_index_path: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export const TriageSettingsResponse = Schema.Struct({
  codebase_id: Schema.String,
  settings: Schema.Struct({
    score_threshold_high: Schema.Number,
    centrality_threshold: Schema.Number,
    safety_threshold: Schema.Number,
    embedding_provider: Schema.String,
    enable_safety_scan: Schema.Boolean,
    enable_rulescan: Schema.Boolean,
    rulescan_rulepack: Schema.NullOr(Schema.String),
    code_index_path: Schema.NullOr(Schema.String)
  })
})
