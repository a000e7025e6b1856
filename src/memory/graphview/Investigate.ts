/**
 * A deterministic answer to a question about the state surface (§6.5): the nodes the question names or whose
 * evidence recall found, their edges and change events, a path from node to event to memory, and the checks an
 * agent should run before trusting the state. No language model. Pure.
 */
import { eventResponse } from "./StateGraph.ts"
import type { StateGraph } from "./StateGraph.ts"
import { contentTokens } from "./TextSignals.ts"

export interface EvidenceStep {
  readonly kind: "node" | "event" | "memory"
  readonly id: string
  readonly label: string
  readonly timestamp: string | null
}

const focalCount = 4
const focalEdges = 8
const focalEvents = 5
const pathNodes = 3
const label = (text: string) => (text.length <= 90 ? text : `${text.slice(0, 89)}…`)

const checks = {
  contradiction: "Review conflicting evidence and confirm which source is current.",
  change: "Check downstream summaries, observations, and docs that depend on the changed state.",
  stale: "Refresh this area with newer evidence before acting on it.",
  none: "Inspect the supporting evidence before promoting this state into a durable model."
} as const

/**
 * `recalled` are the ids of the memories that match the question (the loader's text match): a node whose
 * evidence they are scores higher, as in the reference.
 */
export const investigate = (graph: StateGraph, query: string, recalled: ReadonlySet<string>) => {
  const words = contentTokens(query)
  const scored = graph.nodes.map((node) => {
    const nodeWords = new Set([...contentTokens(node.title), ...contentTokens(node.current_state)])
    const named = [...words].filter((word) => nodeWords.has(word)).length
    const found = node.evidence_ids.filter((id) => recalled.has(id)).length
    return { node, named, found, score: node.change_score + 0.25 * named + 0.15 * found }
  })
  const matching = scored.filter((entry) => entry.named > 0 || entry.found > 0).sort((a, b) => b.score - a.score)
  const focal = (matching.length > 0 ? matching : scored.slice(0, 3)).slice(0, focalCount).map((entry) => entry.node)
  const focalIds = new Set(focal.map((node) => node.id))
  const edges = graph.edges.filter((edge) => focalIds.has(edge.source_id) || focalIds.has(edge.target_id)).slice(
    0,
    focalEdges
  )
  // Events in focal order (the best node's first), each node's most confident first.
  const events = focal.flatMap((node) => graph.events.filter((event) => event.node_id === node.id)).slice(
    0,
    focalEvents
  )

  const answer = events.length > 0
    ? events.slice(0, 3).map((event) => event.summary).join(" ")
    : focal.length > 0
    ? "No high-confidence graph changes were detected for this query. " +
      focal.slice(0, 3).map((node) => `${node.title}: ${node.current_state}`).join(" ")
    : "No meaningful graph intelligence signals were found for this query."

  const path: Array<EvidenceStep> = []
  for (const node of focal.slice(0, pathNodes)) {
    path.push({ kind: "node", id: node.id, label: label(node.title), timestamp: node.primary_timestamp })
    const event = events.find((candidate) => candidate.node_id === node.id)
    const memories = event?.evidence_ids ?? node.evidence_ids
    if (event !== undefined) {
      path.push({
        kind: "event",
        id: event.id,
        label: label(event.summary),
        timestamp: new Date(event.at).toISOString()
      })
    }
    for (const id of memories.slice(0, 2)) {
      const unit = graph.units.get(id)
      if (unit !== undefined) {
        path.push({ kind: "memory", id, label: label(unit.text), timestamp: new Date(unit.at).toISOString() })
      }
    }
  }

  const recommended = [...new Set(events.map((event) => checks[event.change_type]))]
  return {
    answer,
    focal_node_ids: focal.map((node) => node.id),
    focal_edge_ids: edges.map((edge) => edge.id),
    change_events: events.map(eventResponse),
    evidence_path: path,
    recommended_checks: recommended.length > 0 ? recommended : focal.length > 0 ? [checks.none] : []
  }
}
