/**
 * The summary and the neighbourhood of the state surface (§6.6), drawn from a built `StateGraph`: the best nodes
 * by change score, every node clustered by (status, kind), edges bundled between them, and a bounded
 * breadth-first neighbourhood in which change events appear as pseudo-nodes linked to their node. Pure.
 */
import type { ModeHint, NeighborhoodOptions, RelationEdge, StatusTone, SummaryItem } from "./OverviewTypes.ts"
import type { ChangeEvent } from "./ChangeEvents.ts"
import type { NodeStatus, StateGraph, StateNode } from "./StateGraph.ts"
import { round3 } from "./TextSignals.ts"

/** The reference's sizes: nodes built for a summary, top nodes shown, and the mode thresholds. */
export const stateSummaryBuildLimit = 320
const topNodeCount = 8
const detailNodes = 75
const compactNodes = 250

export const stateModeHint = (
  nodes: number
): ModeHint => (nodes > compactNodes ? "overview" : nodes > detailNodes ? "compact" : "detail")

const statusTitle: Record<NodeStatus, string> = {
  contradictory: "Contradictory",
  changed: "Changed",
  stale: "Stale",
  stable: "Stable"
}
const eventTone: Record<ChangeEvent["change_type"], StatusTone> = {
  contradiction: "contradictory",
  change: "changed",
  stale: "stale"
}
const clusterOf = (node: StateNode) => `cluster:state:${node.status}:${node.kind}`

const nodeItem = (node: StateNode, cluster: string | null): SummaryItem => ({
  id: node.id,
  kind: "node",
  title: node.title,
  subtitle: node.subtitle,
  preview_labels: [node.current_state],
  member_count: 1,
  status_tone: node.status,
  display_priority: node.change_score,
  render_mode_hint: "detail",
  cluster_membership: cluster,
  node_ref: node.id
})

const eventItem = (event: ChangeEvent): SummaryItem => ({
  id: event.id,
  kind: "node",
  title: event.summary,
  subtitle: event.time_window === null ? event.change_type : `${event.change_type} • ${event.time_window}`,
  preview_labels: event.before_state === null ? [event.after_state] : [event.before_state, event.after_state],
  member_count: event.evidence_ids.length,
  status_tone: eventTone[event.change_type],
  display_priority: event.confidence,
  render_mode_hint: "event",
  cluster_membership: null,
  node_ref: event.node_id
})

export const stateSummary = (graph: StateGraph) => {
  const nodes = graph.nodes.slice(0, stateSummaryBuildLimit)
  const top = nodes.slice(0, topNodeCount)
  const topIds = new Set(top.map((node) => node.id))
  const groups = new Map<string, Array<StateNode>>()
  for (const node of nodes) {
    const members = groups.get(clusterOf(node))
    if (members === undefined) groups.set(clusterOf(node), [node])
    else members.push(node)
  }
  const clusters = [...groups.entries()].map(([id, members]): SummaryItem => {
    const first = members[0]!
    const noun = first.kind === "entity" ? "Entities" : "Topics"
    return {
      id,
      kind: "cluster",
      title: `${statusTitle[first.status]} ${noun}`,
      subtitle: `${members.length} ${
        members.length === 1 ? noun.toLowerCase().replace(/ies$/, "y").replace(/s$/, "") : noun.toLowerCase()
      }`,
      preview_labels: members.slice(0, 3).map((member) => member.title),
      member_count: members.length,
      status_tone: first.status,
      display_priority: Math.max(...members.map((member) => member.change_score)),
      render_mode_hint: members.length > topNodeCount ? "collapsed" : "expanded",
      cluster_membership: null,
      node_ref: null
    }
  }).sort((a, b) => b.display_priority - a.display_priority || (a.id < b.id ? -1 : 1))
  const clusterOfId = new Map(nodes.map((node) => [node.id, clusterOf(node)]))
  const endpoint = (id: string) => (topIds.has(id) ? id : clusterOfId.get(id))
  const bundles = new Map<string, { id: string; source_id: string; target_id: string; weight: number }>()
  for (const edge of graph.edges) {
    const [source, target] = [endpoint(edge.source_id), endpoint(edge.target_id)]
    if (source === undefined || target === undefined || source === target) continue
    const [a, b] = [source, target].sort() as [string, string]
    const key = `${a}~${b}`
    const bundle = bundles.get(key) ?? { id: key, source_id: a, target_id: b, weight: 0 }
    bundles.set(key, { ...bundle, weight: bundle.weight + Math.max(0.1, edge.strength) })
  }
  return {
    mode_hint: stateModeHint(graph.nodes.length),
    total_nodes: graph.nodes.length,
    total_edges: graph.edges.length + graph.events.length,
    clusters,
    top_nodes: top.map((node) => nodeItem(node, clusterOf(node))),
    bundled_edges: [...bundles.values()]
      .sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : 1))
      .map((bundle) => ({ ...bundle, weight: round3(bundle.weight) })),
    initial_focus_ids: top.slice(0, 3).map((node) => node.id)
  }
}

/** Undefined when focus ids were given and none of them is a node or an event of the surface. */
export const stateNeighborhood = (graph: StateGraph, options: NeighborhoodOptions) => {
  const nodeById = new Map(graph.nodes.map((node) => [node.id, node]))
  const eventById = new Map(graph.events.map((event) => [event.id, event]))
  const known = (id: string) => nodeById.has(id) || eventById.has(id)
  const focus = options.focusIds.length > 0
    ? [...new Set(options.focusIds)].filter(known)
    : graph.nodes.slice(0, 3).map((node) => node.id)
  if (options.focusIds.length > 0 && focus.length === 0) return undefined

  // Relations and event links, each stored once per end; the strongest are walked first.
  const links = new Map<string, Array<{ other: string; edge: RelationEdge }>>()
  const link = (a: string, b: string, edge: RelationEdge) => {
    for (const [self, other] of [[a, b], [b, a]] as const) {
      const list = links.get(self)
      if (list === undefined) links.set(self, [{ other, edge }])
      else list.push({ other, edge })
    }
  }
  for (const edge of graph.edges) {
    link(edge.source_id, edge.target_id, {
      id: edge.id,
      source_id: edge.source_id,
      target_id: edge.target_id,
      relation_type: edge.relation_type,
      strength: edge.strength,
      evidence_count: edge.evidence_count
    })
  }
  for (const event of graph.events) {
    link(event.node_id, event.id, {
      id: `${event.node_id}~${event.id}~${event.change_type}`,
      source_id: event.node_id,
      target_id: event.id,
      relation_type: event.change_type,
      strength: event.confidence,
      evidence_count: event.evidence_ids.length
    })
  }
  for (const list of links.values()) {
    list.sort((a, b) => b.edge.strength - a.edge.strength || (a.other < b.other ? -1 : 1))
  }

  const depthOf = new Map<string, number>()
  for (const id of focus.slice(0, options.limitNodes)) depthOf.set(id, 0)
  let frontier = [...depthOf.keys()]
  let unreached = false
  for (let depth = 1; depth <= options.depth && frontier.length > 0; depth++) {
    const next: Array<string> = []
    for (const id of frontier) {
      for (const { other } of links.get(id) ?? []) {
        if (depthOf.has(other)) continue
        if (depthOf.size >= options.limitNodes) {
          unreached = true
          continue
        }
        depthOf.set(other, depth)
        next.push(other)
      }
    }
    frontier = next
  }
  // Nodes one hop beyond the depth also mean there is more to see (the cursor asks for the next depth).
  const beyond = frontier.some((id) => (links.get(id) ?? []).some(({ other }) => !depthOf.has(other)))
  const edges = new Map<string, RelationEdge>()
  for (const id of depthOf.keys()) {
    for (const { other, edge } of links.get(id) ?? []) if (depthOf.has(other)) edges.set(edge.id, edge)
  }
  const sortedEdges = [...edges.values()].sort((a, b) => b.strength - a.strength || (a.id < b.id ? -1 : 1))
  const kept = sortedEdges.slice(0, options.limitEdges)
  const hasMore = unreached || beyond || kept.length < sortedEdges.length
  const items = [...depthOf.entries()].map(([id, depth]) => {
    const node = nodeById.get(id)
    return { ...(node !== undefined ? nodeItem(node, clusterOf(node)) : eventItem(eventById.get(id)!)), depth }
  }).sort((a, b) => a.depth - b.depth || b.display_priority - a.display_priority || (a.id < b.id ? -1 : 1))
  return {
    mode_hint: stateModeHint(items.length),
    focus_ids: focus.slice(0, options.limitNodes),
    nodes: items,
    edges: kept,
    total_nodes: graph.nodes.length + graph.events.length,
    total_edges: graph.edges.length + graph.events.length,
    has_more: hasMore,
    cursor: hasMore ? `depth:${Math.min(3, options.depth + 1)}` : null
  }
}
