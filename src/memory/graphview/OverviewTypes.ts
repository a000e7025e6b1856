/**
 * The shapes of the large-graph views (summary items, relation edges, neighbourhood options), shared by the view
 * (`GraphOverview`), the state surface it reads (`StateOverview`) and graph intelligence, which caches that surface;
 * kept apart so that none of them imports another for its types.
 */

export type StatusTone = "stable" | "changed" | "contradictory" | "stale" | "neutral"
export type ModeHint = "detail" | "compact" | "overview"

export interface SummaryItem {
  readonly id: string
  readonly kind: "cluster" | "node"
  readonly title: string
  readonly subtitle: string
  readonly preview_labels: ReadonlyArray<string>
  readonly member_count: number
  readonly status_tone: StatusTone
  readonly display_priority: number
  readonly render_mode_hint: string
  readonly cluster_membership: string | null
  readonly node_ref: string | null
}

export interface RelationEdge {
  readonly id: string
  readonly source_id: string
  readonly target_id: string
  readonly relation_type: string
  readonly strength: number
  readonly evidence_count: number
}

export interface NeighborhoodOptions {
  readonly focusIds: ReadonlyArray<string>
  readonly depth: number
  readonly limitNodes: number
  readonly limitEdges: number
}
