/**
 * Graph routes: the evidence view (memories as nodes, the stored links as edges), the timeline, the summary
 * and neighbourhood that keep large graphs readable, and graph intelligence (the state surface: what changed,
 * contradicts or went stale) with its deterministic investigation.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import { NotFound } from "../../domain/Errors.ts"
import { FactType } from "../../domain/Memory.ts"
import { TagsMatch } from "../../domain/Recall.ts"

const Nullable = Schema.NullOr(Schema.String)

export const GraphNode = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  text: Schema.String,
  type: Schema.String,
  entities: Schema.Array(Schema.String),
  tags: Schema.Array(Schema.String),
  context: Nullable,
  date: Schema.String,
  occurred_start: Nullable,
  occurred_end: Nullable,
  mentioned_at: Nullable,
  document_id: Nullable,
  access_count: Schema.Int
}).annotate({ identifier: "GraphNode" })

export const GraphEdge = Schema.Struct({
  id: Schema.String,
  from: Schema.String,
  to: Schema.String,
  type: Schema.String.annotate({ description: "semantic, temporal, entity, causes, caused_by, enables, prevents" }),
  weight: Schema.Number
}).annotate({ identifier: "GraphEdge" })

export const GraphTableRow = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  context: Nullable,
  date: Schema.String,
  type: Schema.String,
  entities: Schema.String,
  tags: Schema.Array(Schema.String),
  document_id: Nullable,
  chunk_id: Nullable,
  occurred_start: Nullable,
  occurred_end: Nullable,
  mentioned_at: Nullable,
  access_count: Schema.Int
}).annotate({ identifier: "GraphTableRow" })

export const GraphDataResponse = Schema.Struct({
  nodes: Schema.Array(GraphNode),
  edges: Schema.Array(GraphEdge),
  table_rows: Schema.Array(GraphTableRow),
  total_units: Schema.Int,
  limit: Schema.Int
}).annotate({ identifier: "GraphDataResponse" })

export const TimelineResponse = Schema.Struct({
  items: Schema.Array(GraphNode),
  edges: Schema.Array(GraphEdge),
  total_items: Schema.Int,
  limit: Schema.Int
}).annotate({ identifier: "TimelineResponse" })

/** `?tags=a&tags=b` arrives as a list, `?tags=a` as one string. */
export const TagsQuery = Schema.Union([Schema.String, Schema.Array(Schema.String)])

const viewQuery = {
  type: Schema.optionalKey(FactType),
  limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10000 }))),
  q: Schema.optionalKey(Schema.String),
  tags: Schema.optionalKey(TagsQuery),
  tags_match: Schema.optionalKey(TagsMatch)
}

const GraphSummaryItem = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["cluster", "node"]),
  title: Schema.String,
  subtitle: Schema.String,
  preview_labels: Schema.Array(Schema.String),
  member_count: Schema.Int,
  status_tone: Schema.Literals(["stable", "changed", "contradictory", "stale", "neutral"]),
  display_priority: Schema.Number,
  render_mode_hint: Schema.String,
  cluster_membership: Nullable,
  node_ref: Nullable
}).annotate({ identifier: "GraphSummaryItemResponse" })

const Surface = Schema.Literals(["state", "evidence"])
const ModeHint = Schema.Literals(["detail", "compact", "overview"])

export const GraphSummaryResponse = Schema.Struct({
  surface: Surface,
  mode_hint: ModeHint,
  total_nodes: Schema.Int,
  total_edges: Schema.Int,
  clusters: Schema.Array(GraphSummaryItem),
  top_nodes: Schema.Array(GraphSummaryItem),
  bundled_edges: Schema.Array(Schema.Struct({
    id: Schema.String,
    source_id: Schema.String,
    target_id: Schema.String,
    weight: Schema.Number
  })),
  initial_focus_ids: Schema.Array(Schema.String),
  generated_at: Schema.String,
  cached: Schema.Boolean
}).annotate({ identifier: "GraphSummaryResponse" })

export const GraphRelationEdge = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  target_id: Schema.String,
  relation_type: Schema.String,
  strength: Schema.Number,
  evidence_count: Schema.Int
}).annotate({ identifier: "GraphRelationEdgeResponse" })

export const GraphNeighborhoodResponse = Schema.Struct({
  surface: Surface,
  mode_hint: ModeHint,
  focus_ids: Schema.Array(Schema.String),
  nodes: Schema.Array(Schema.Struct({ ...GraphSummaryItem.fields, depth: Schema.Int })),
  edges: Schema.Array(GraphRelationEdge),
  total_nodes: Schema.Int,
  total_edges: Schema.Int,
  has_more: Schema.Boolean,
  cursor: Nullable,
  generated_at: Schema.String,
  cached: Schema.Boolean
}).annotate({ identifier: "GraphNeighborhoodResponse" })

const int = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const ConfidenceMin = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
const NodeKind = Schema.Literals(["all", "entity", "topic"])
const WindowDays = int(0, 36500).annotate({
  description: "memories of the last N days (evidence surface: stored; state surface: happened, else said, else " +
    "stored); default 90, 0 = all"
})

/** The parameters common to the graph-intelligence routes. */
const stateQuery = {
  type: Schema.optionalKey(FactType),
  q: Schema.optionalKey(Schema.String),
  tags: Schema.optionalKey(TagsQuery),
  tags_match: Schema.optionalKey(TagsMatch),
  confidence_min: Schema.optionalKey(ConfidenceMin),
  node_kind: Schema.optionalKey(NodeKind),
  window_days: Schema.optionalKey(WindowDays)
}

/** The parameters shared by the summary and the neighbourhood. */
const overviewQuery = { ...stateQuery, surface: Schema.optionalKey(Surface) }

const Status = Schema.Literals(["stable", "changed", "contradictory", "stale"])

export const GraphIntelligenceNode = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  kind: Schema.Literals(["entity", "topic"]),
  subtitle: Schema.String,
  current_state: Schema.String,
  status: Status,
  status_reason: Schema.String,
  confidence: Schema.Number,
  change_score: Schema.Number,
  last_changed_at: Nullable,
  primary_timestamp: Nullable,
  evidence_count: Schema.Int,
  tags: Schema.Array(Schema.String),
  evidence_ids: Schema.Array(Schema.String),
  conviction: Schema.NullOr(Schema.Number),
  semantic_change_magnitude: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "GraphIntelligenceNodeResponse" })

export const GraphIntelligenceEdge = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  target_id: Schema.String,
  relation_type: Schema.Literals(["co_occurs", "tagged_with"]),
  strength: Schema.Number,
  evidence_count: Schema.Int,
  semantic_weight: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "GraphIntelligenceEdgeResponse" })

export const GraphChangeEvent = Schema.Struct({
  id: Schema.String,
  node_id: Schema.String,
  change_type: Schema.Literals(["change", "contradiction", "stale"]),
  before_state: Nullable,
  after_state: Schema.String,
  confidence: Schema.Number,
  time_window: Nullable,
  evidence_ids: Schema.Array(Schema.String),
  summary: Schema.String
}).annotate({ identifier: "GraphChangeEventResponse" })

export const GraphIntelligenceResponse = Schema.Struct({
  nodes: Schema.Array(GraphIntelligenceNode),
  edges: Schema.Array(GraphIntelligenceEdge),
  change_events: Schema.Array(GraphChangeEvent),
  total_nodes: Schema.Int,
  generated_at: Schema.String,
  cached: Schema.Boolean
}).annotate({ identifier: "GraphIntelligenceResponse" })

export const GraphInvestigateRequest = Schema.Struct({
  query: Schema.String.check(Schema.isMinLength(1)),
  type: Schema.optionalKey(Schema.NullOr(FactType)),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  tags_match: Schema.optionalKey(TagsMatch),
  confidence_min: Schema.optionalKey(ConfidenceMin),
  node_kind: Schema.optionalKey(NodeKind),
  window_days: Schema.optionalKey(Schema.NullOr(WindowDays)),
  limit: Schema.optionalKey(int(1, 100))
}).annotate({ identifier: "GraphInvestigateRequest" })

export const GraphInvestigationResponse = Schema.Struct({
  answer: Schema.String,
  focal_node_ids: Schema.Array(Schema.String),
  focal_edge_ids: Schema.Array(Schema.String),
  change_events: Schema.Array(GraphChangeEvent),
  evidence_path: Schema.Array(
    Schema.Struct({
      kind: Schema.Literals(["node", "event", "memory"]),
      id: Schema.String,
      label: Schema.String,
      timestamp: Nullable
    }).annotate({ identifier: "GraphEvidencePathStepResponse" })
  ),
  recommended_checks: Schema.Array(Schema.String)
}).annotate({ identifier: "GraphInvestigationResponse" })

export class GraphApi extends HttpApiGroup.make("graph")
  .add(
    HttpApiEndpoint.get("graph", "/v1/default/banks/:bank_id/graph", {
      params: { bank_id: BankId },
      query: viewQuery,
      success: GraphDataResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The bank's most recent memories (`limit` default 1000) as nodes and the links between them as edges, with " +
        "a table view; `total_units` counts every memory matching the filters. `tags_match` defaults to all_strict."
    ),
    HttpApiEndpoint.get("timeline", "/v1/default/banks/:bank_id/timeline", {
      params: { bank_id: BankId },
      query: viewQuery,
      success: TimelineResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Memories that have a time, oldest first (the newest `limit`, default 500), with the links between them. " +
        "`tags_match` defaults to all_strict."
    ),
    HttpApiEndpoint.get("summary", "/v1/default/banks/:bank_id/graph/summary", {
      params: { bank_id: BankId },
      query: overviewQuery,
      success: GraphSummaryResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "An overview for large graphs: communities as clusters, the most central nodes, edges bundled between " +
        "clusters and where to focus first. `surface` state (default: entities and topics) or evidence (memories)."
    ),
    HttpApiEndpoint.get("neighborhood", "/v1/default/banks/:bank_id/graph/neighborhood", {
      params: { bank_id: BankId },
      query: {
        ...overviewQuery,
        focus_ids: Schema.optionalKey(TagsQuery),
        depth: Schema.optionalKey(int(1, 3)),
        limit_nodes: Schema.optionalKey(int(1, 120)),
        limit_edges: Schema.optionalKey(int(1, 300))
      },
      success: GraphNeighborhoodResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The bounded neighbourhood of `focus_ids` (default: the summary's initial focus) up to `depth` hops " +
        "(1-3, default 1), strongest links first, at most `limit_nodes` (60) nodes and `limit_edges` (140) edges. " +
        "On the state surface change events are pseudo-nodes linked to their node; `has_more` with `cursor` " +
        "`depth:{n}` says a deeper request would show more."
    ),
    HttpApiEndpoint.get("intelligence", "/v1/default/banks/:bank_id/graph/intelligence", {
      params: { bank_id: BankId },
      query: { ...stateQuery, limit: Schema.optionalKey(int(1, 100)) },
      success: GraphIntelligenceResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "The state surface, deterministic: entity and topic nodes over `window_days` (default 90) with confidence " +
        "(below `confidence_min`, default 0.55, dropped), status stable, changed, contradictory or stale and why, " +
        "change events with their evidence, co_occurs and tagged_with edges, ranked by change score; the best " +
        "`limit` (1-100, default 18) nodes. Cached until the bank's next write (`cached: true` on a hit)."
    ),
    HttpApiEndpoint.post("investigate", "/v1/default/banks/:bank_id/graph/investigate", {
      params: { bank_id: BankId },
      payload: GraphInvestigateRequest,
      success: GraphInvestigationResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "A deterministic answer (no language model) to a question about the state surface: the focal nodes and " +
        "edges, their change events, an evidence path from node to event to memory, and recommended checks."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Graph", description: "Evidence graph, timeline and graph intelligence" })
  )
{}
