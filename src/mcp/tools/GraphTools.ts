/**
 * MCP tools for graph intelligence: the state surface (what changed, contradicts itself or went stale, per entity
 * and topic) and its deterministic investigation. They call `GraphIntelligence` with the REST routes' defaults
 * (`surfaceFilterOf`) and the REST request's field schemas.
 */
import { Effect } from "effect"
import { GraphInvestigateRequest } from "../../http/api/GraphApi.ts"
import { GraphIntelligence } from "../../memory/GraphIntelligence.ts"
import { surfaceFilterOf } from "../../memory/graphview/Surfaces.ts"
import { defineTool, described } from "../McpTool.ts"

const request = GraphInvestigateRequest.fields

const filterFields = {
  type: described(request.type, "Only memories of this type: world, experience or opinion."),
  tags: described(request.tags, "Only memories carrying these tags."),
  tags_match: described(request.tags_match, "How tags match: all_strict (default), all, any or any_strict."),
  confidence_min: described(request.confidence_min, "Drop nodes below this confidence (0-1, default 0.55)."),
  node_kind: described(request.node_kind, "all (default), entity or topic."),
  window_days: described(request.window_days, "Memories of the last N days (default 90; 0 or null: all)."),
  limit: described(request.limit, "How many nodes to return (1-100, default 18).")
}

export const graphTools = Effect.gen(function*() {
  const intelligence = yield* GraphIntelligence

  return [
    defineTool({
      name: "graph_intelligence",
      title: "Graph intelligence",
      description: "What the bank's knowledge says now, per entity and topic: each node's current state, its status " +
        "(stable, changed, contradictory or stale) and why, its confidence and evidence memory ids, the change " +
        "events, and co-occurrence edges, ranked by how much changed. Deterministic (no language model).",
      fields: filterFields,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { limit, ...filter }) => intelligence.intelligence(bankId, surfaceFilterOf(filter), limit ?? 18)
    }),
    defineTool({
      name: "investigate_graph",
      title: "Investigate the knowledge graph",
      description: "Ask a question about what changed or conflicts in the bank's knowledge (e.g. 'What changed " +
        "about Priya's job?'): a deterministic answer with the focal nodes and edges, their change events, an " +
        "evidence path from node to event to memory, and recommended checks.",
      fields: {
        query: described(request.query, "The question, e.g. 'Where does Priya live now?'."),
        ...filterFields
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { query, limit, ...filter }) =>
        intelligence.investigate(bankId, query, surfaceFilterOf(filter), limit ?? 18)
    })
  ]
})
