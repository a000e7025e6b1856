/**
 * The state surface assembled (§6.4): nodes with statuses and reasons, change events, `co_occurs` edges between
 * entities named together and `tagged_with` edges from entities to topics, staleness, and the change-score ranking
 * that decides what an agent should look at first. Pure: the same evidence and clock give the same graph.
 */
import type { ChangeEvent } from "./ChangeEvents.ts"
import { changeEvents, contradictionEvents, stateText } from "./ChangeEvents.ts"
import type { StateGroup } from "./StateNodes.ts"
import { stateGroups } from "./StateNodes.ts"
import type { StateUnit } from "./StateUnits.ts"
import { cosine } from "../Cosine.ts"
import { clamp, round3 } from "./TextSignals.ts"

export type NodeStatus = "stable" | "changed" | "contradictory" | "stale"

export interface StateNode {
  readonly id: string
  readonly title: string
  readonly kind: "entity" | "topic"
  readonly subtitle: string
  readonly current_state: string
  readonly status: NodeStatus
  readonly status_reason: string
  readonly confidence: number
  readonly change_score: number
  readonly last_changed_at: string | null
  readonly primary_timestamp: string | null
  readonly evidence_count: number
  readonly tags: ReadonlyArray<string>
  readonly evidence_ids: ReadonlyArray<string>
  readonly conviction: number | null
  readonly semantic_change_magnitude: number | null
}

export interface StateEdge {
  readonly id: string
  readonly source_id: string
  readonly target_id: string
  readonly relation_type: "co_occurs" | "tagged_with"
  readonly strength: number
  readonly evidence_count: number
  readonly semantic_weight: number | null
}

export interface StateGraph {
  /** Every node at or above the confidence threshold, best change score first. */
  readonly nodes: ReadonlyArray<StateNode>
  /** Edges between those nodes, strongest first. */
  readonly edges: ReadonlyArray<StateEdge>
  /** Every change event, most confident first. */
  readonly events: ReadonlyArray<ChangeEvent>
  /** The evidence by id, for labels of evidence paths. */
  readonly units: ReadonlyMap<string, StateUnit>
}

const dayMillis = 86_400_000
const staleDays = 45
const staleImportance = 0.35
const evidenceIdsShown = 20
const tagsShown = 10
export const statusPriority: Record<NodeStatus, number> = { contradictory: 0, changed: 1, stale: 2, stable: 3 }
const eventWeight = { contradiction: 0.15, change: 0.25, stale: 0.1 } as const

const iso = (at: number) => new Date(at).toISOString()
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
/** "Mar 04" (UTC); `toLocaleDateString` cost a millisecond a node. */
const month = (at: number) => {
  const date = new Date(at)
  return `${months[date.getUTCMonth()]} ${String(date.getUTCDate()).padStart(2, "0")}`
}

const edgesOf = (groups: ReadonlyArray<StateGroup>) => {
  const byId = new Map(groups.map((group) => [group.id, group]))
  const nodesOfUnit = new Map<string, { entities: Array<string>; topics: Array<string> }>()
  for (const group of groups) {
    for (const unit of group.units) {
      let found = nodesOfUnit.get(unit.id)
      if (found === undefined) nodesOfUnit.set(unit.id, found = { entities: [], topics: [] })
      ;(group.kind === "entity" ? found.entities : found.topics).push(group.id)
    }
  }
  const counts = new Map<
    string,
    { source: string; target: string; relation: StateEdge["relation_type"]; count: number }
  >()
  const count = (source: string, target: string, relation: StateEdge["relation_type"]) => {
    const key = `${source}~${target}~${relation}`
    const found = counts.get(key)
    if (found === undefined) counts.set(key, { source, target, relation, count: 1 })
    else found.count++
  }
  for (const { entities, topics } of nodesOfUnit.values()) {
    const sorted = [...entities].sort()
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) count(sorted[i]!, sorted[j]!, "co_occurs")
      for (const topic of topics) count(sorted[i]!, topic, "tagged_with")
    }
  }
  return [...counts.entries()].map(([id, edge]): StateEdge => {
    const [a, b] = [byId.get(edge.source)!.meanEmbedding, byId.get(edge.target)!.meanEmbedding]
    return {
      id,
      source_id: edge.source,
      target_id: edge.target,
      relation_type: edge.relation,
      strength: round3(clamp(Math.log1p(edge.count) / 2)),
      evidence_count: edge.count,
      semantic_weight: a === null || b === null ? null : round3(cosine(a, b))
    }
  }).sort((a, b) => b.strength - a.strength || b.evidence_count - a.evidence_count || (a.id < b.id ? -1 : 1))
}

export const buildStateGraph = (
  units: ReadonlyArray<StateUnit>,
  options: { readonly confidenceMin: number; readonly nodeKind: "all" | "entity" | "topic" },
  now: number
): StateGraph => {
  const groups = stateGroups(units, options, now)
  const eventsOf = new Map<string, Array<ChangeEvent>>()
  for (const group of groups) {
    eventsOf.set(group.id, [...contradictionEvents(group), ...changeEvents(group)])
  }
  const edges = edgesOf(groups)
  const incident = new Map<string, number>()
  const neighbours = new Map<string, Set<string>>()
  for (const edge of edges) {
    for (const [self, other] of [[edge.source_id, edge.target_id], [edge.target_id, edge.source_id]] as const) {
      incident.set(self, (incident.get(self) ?? 0) + edge.evidence_count)
      let set = neighbours.get(self)
      if (set === undefined) neighbours.set(self, set = new Set())
      set.add(other)
    }
  }
  const maxIncident = Math.max(1, ...incident.values())
  const centrality = (id: string) => (incident.get(id) ?? 0) / maxIncident
  const importance = (group: StateGroup) =>
    clamp(
      0.4 * centrality(group.id) + 0.35 * Math.min(1, Math.log1p(group.units.length) / 2.5) +
        0.25 * Math.min(1, Math.log1p(group.units.reduce((sum, unit) => sum + unit.proofs + unit.accesses, 0)) / 3)
    )
  const moving = new Set([...eventsOf].filter(([, events]) => events.length > 0).map(([id]) => id))
  for (const group of groups) {
    const old = now - group.latest.at >= staleDays * dayMillis
    const neighbourMoved = [...(neighbours.get(group.id) ?? [])].some((id) => moving.has(id))
    const ownRecent = (eventsOf.get(group.id) ?? []).some((event) => now - event.at < staleDays * dayMillis)
    if (!old || !neighbourMoved || ownRecent || importance(group) < staleImportance) continue
    eventsOf.get(group.id)!.push({
      id: `event:${group.id}:stale`,
      node_id: group.id,
      change_type: "stale",
      before_state: null,
      after_state: stateText(group.latest.text),
      confidence: clamp(0.9 * group.confidence),
      time_window: null,
      evidence_ids: group.units.slice(-3).map((unit) => unit.id),
      summary: `${group.title} looks stale relative to recent movement around it.`,
      at: group.latest.at
    })
  }

  const nodes = groups.map((group): StateNode => {
    const events = eventsOf.get(group.id)!
    const has = (type: ChangeEvent["change_type"]) => events.some((event) => event.change_type === type)
    const status: NodeStatus = has("stale")
      ? "stale"
      : has("contradiction")
      ? "contradictory"
      : has("change")
      ? "changed"
      : "stable"
    const reason = status === "contradictory"
      ? `Conflicting evidence is active for ${group.title}.`
      : status === "changed"
      ? `Recent evidence suggests ${group.title} changed.`
      : status === "stale"
      ? `${group.title} has not been refreshed while connected signals moved.`
      : `${group.title} is currently supported by consistent evidence.`
    const maxContradiction = Math.max(
      0,
      ...events.filter((e) => e.change_type === "contradiction").map((e) => e.confidence)
    )
    const surfaceConfidence = group.confidence * (1 - maxContradiction * 0.6)
    const eventBoost = clamp(
      events.reduce((sum, event) => sum + eventWeight[event.change_type] * event.confidence, 0),
      0,
      0.35
    )
    const convictionBoost = group.conviction === null ? 0 : clamp((0.55 - group.conviction) * 0.2, 0, 0.1)
    const changeScore = clamp(
      0.35 * surfaceConfidence + 0.25 * group.recency + 0.2 * centrality(group.id) + 0.2 * importance(group) +
        eventBoost + (status === "stale" ? 0.1 : 0) + convictionBoost
    )
    const moves = events.filter((event) => event.change_type !== "stale")
    const tagCounts = new Map<string, number>()
    for (const unit of group.units) for (const tag of unit.tags) tagCounts.set(tag, (tagCounts.get(tag) ?? 0) + 1)
    const count = group.units.length
    return {
      id: group.id,
      title: group.title,
      kind: group.kind,
      subtitle: `${group.kind === "entity" ? "Entity" : "Topic"} • ${count} evidence ${
        count === 1 ? "item" : "items"
      } • updated ${month(group.latest.at)}`,
      current_state: stateText(group.latest.text),
      status,
      status_reason: reason,
      confidence: round3(surfaceConfidence),
      change_score: round3(changeScore),
      last_changed_at: moves.length === 0 ? null : iso(Math.max(...moves.map((event) => event.at))),
      primary_timestamp: iso(group.latest.at),
      evidence_count: count,
      tags: [...tagCounts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, tagsShown).map(([tag]) =>
        tag
      ),
      evidence_ids: group.units.slice(-evidenceIdsShown).reverse().map((unit) => unit.id),
      conviction: group.conviction === null ? null : round3(group.conviction),
      semantic_change_magnitude: group.semanticChangeMagnitude === null ? null : round3(group.semanticChangeMagnitude)
    }
  }).sort((a, b) =>
    b.change_score - a.change_score || statusPriority[a.status] - statusPriority[b.status] ||
    (a.title < b.title ? -1 : a.title > b.title ? 1 : 0)
  )
  const events = [...eventsOf.values()].flat().sort((a, b) =>
    b.confidence - a.confidence || b.at - a.at || (a.id < b.id ? -1 : 1)
  )
  return { nodes, edges, events, units: new Map(units.map((unit) => [unit.id, unit])) }
}

/** The response's view: the best `limit` nodes, the edges among them and their events. */
export const intelligenceView = (graph: StateGraph, limit: number) => {
  const nodes = graph.nodes.slice(0, limit)
  const kept = new Set(nodes.map((node) => node.id))
  return {
    nodes,
    edges: graph.edges.filter((edge) => kept.has(edge.source_id) && kept.has(edge.target_id)),
    change_events: graph.events.filter((event) => kept.has(event.node_id)).map(eventResponse),
    total_nodes: graph.nodes.length
  }
}

export const eventResponse = ({ at: _at, ...event }: ChangeEvent) => event
