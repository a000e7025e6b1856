/**
 * The large-graph views: a summary (clusters, the most important nodes, bundled edges between clusters, where to
 * focus first) and a bounded neighbourhood around focus nodes, on either surface. `state` (entities and topics with
 * statuses and change events) is graph intelligence's (`GraphIntelligence`, cached until the bank's next write);
 * `evidence` (memories and their links, communities as clusters) is read here per request. Read-only.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { NotFound } from "../domain/Errors.ts"
import { GraphIntelligence } from "./GraphIntelligence.ts"
import { communities } from "./graphview/Communities.ts"
import type { Surface, SurfaceEdge, SurfaceFilter, SurfaceNode } from "./graphview/Surfaces.ts"
import type { ModeHint, NeighborhoodOptions, RelationEdge, StatusTone, SummaryItem } from "./graphview/OverviewTypes.ts"
import { makeSurface } from "./graphview/Surfaces.ts"

/** At most this many nodes are clustered for a summary; `total_nodes` still counts every match. */
const summaryNodes = 2000
const topNodeCount = 12
const clusterCount = 24
const bundledEdgeCount = 100
/** A node first stored this recently reads as `changed`. */
const recentDays = 7

export const modeHint = (nodes: number): ModeHint => (nodes <= 40 ? "detail" : nodes <= 200 ? "compact" : "overview")

const round = (value: number) => Math.round(value * 1000) / 1000

const toRelation = (edge: SurfaceEdge): RelationEdge => ({
  id: `${edge.source}~${edge.target}~${edge.relation}`,
  source_id: edge.source,
  target_id: edge.target,
  relation_type: edge.relation,
  strength: round(edge.strength),
  evidence_count: edge.evidence
})

export class GraphOverview extends Context.Service<GraphOverview, {
  readonly summary: (bankId: string, surface: Surface, filter: SurfaceFilter) => Effect.Effect<{
    readonly surface: Surface
    readonly mode_hint: ModeHint
    readonly total_nodes: number
    readonly total_edges: number
    readonly clusters: ReadonlyArray<SummaryItem>
    readonly top_nodes: ReadonlyArray<SummaryItem>
    readonly bundled_edges: ReadonlyArray<{ id: string; source_id: string; target_id: string; weight: number }>
    readonly initial_focus_ids: ReadonlyArray<string>
    readonly generated_at: string
    readonly cached: boolean
  }, NotFound>
  readonly neighborhood: (
    bankId: string,
    surface: Surface,
    filter: SurfaceFilter,
    options: NeighborhoodOptions
  ) => Effect.Effect<{
    readonly surface: Surface
    readonly mode_hint: ModeHint
    readonly focus_ids: ReadonlyArray<string>
    readonly nodes: ReadonlyArray<SummaryItem & { readonly depth: number }>
    readonly edges: ReadonlyArray<RelationEdge>
    readonly total_nodes: number
    readonly total_edges: number
    readonly has_more: boolean
    readonly cursor: string | null
    readonly generated_at: string
    readonly cached: boolean
  }, NotFound>
}>()("engram/memory/GraphOverview") {
  static readonly layer = Layer.effect(
    GraphOverview,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const intelligence = yield* GraphIntelligence

      const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

      const toneOf = (node: SurfaceNode, at: Date): StatusTone =>
        node.kind === "memory"
          ? "neutral"
          : at.getTime() - node.firstStored.getTime() <= recentDays * 86_400_000
          ? "changed"
          : "stable"

      const nodeItem = (node: SurfaceNode, priority: number, cluster: string | null, at: Date): SummaryItem => ({
        id: node.id,
        kind: "node",
        title: node.title,
        subtitle: node.subtitle,
        preview_labels: [],
        member_count: 1,
        status_tone: toneOf(node, at),
        display_priority: round(priority),
        render_mode_hint: "detail",
        cluster_membership: cluster,
        node_ref: node.id
      })

      /** Weighted degree plus a share of the node's memories: how central a node is, 0..1. */
      const priorities = (nodes: ReadonlyArray<SurfaceNode>, edges: ReadonlyArray<SurfaceEdge>) => {
        const degree = new Map<string, number>()
        for (const edge of edges) {
          degree.set(edge.source, (degree.get(edge.source) ?? 0) + edge.strength)
          degree.set(edge.target, (degree.get(edge.target) ?? 0) + edge.strength)
        }
        const maxDegree = Math.max(1e-9, ...degree.values())
        const maxMentions = Math.max(1, ...nodes.map((node) => node.mentions))
        return new Map(nodes.map((node) => [
          node.id,
          0.7 * ((degree.get(node.id) ?? 0) / maxDegree) + 0.3 * (node.mentions / maxMentions)
        ]))
      }

      const summary = Effect.fn("GraphOverview.summary")(
        function*(bankId: string, surface: Surface, filter: SurfaceFilter) {
          if (surface === "state") return { surface, ...(yield* intelligence.summary(bankId, filter)) }
          yield* banks.get(bankId)
          const reader = makeSurface(sql, bankId, filter)
          const { nodes, total } = yield* reader.top(summaryNodes)
          const edges = yield* reader.among(nodes.map((node) => node.id))
          const at = yield* now
          const community = communities(nodes.map((node) => node.id), edges)
          const priority = priorities(nodes, edges)
          const byPriority = [...nodes].sort((a, b) =>
            priority.get(b.id)! - priority.get(a.id)! || (a.id < b.id ? -1 : 1)
          )
          const clusterId = (node: string) => `cluster-${community.get(node)}`

          const groups = new Map<string, Array<SurfaceNode>>()
          for (const node of byPriority) {
            const group = groups.get(clusterId(node.id))
            if (group === undefined) groups.set(clusterId(node.id), [node])
            else group.push(node)
          }
          const [one, many] = surface === "evidence" ? ["memory", "memories"] : ["concept", "concepts"]
          const clusters = [...groups.entries()].slice(0, clusterCount).map(([id, members]): SummaryItem => {
            const tones = members.map((member) => toneOf(member, at))
            return {
              id,
              kind: "cluster",
              title: members[0]!.title,
              subtitle: `${members.length} ${members.length === 1 ? one : many}`,
              preview_labels: members.slice(0, 3).map((member) => member.title),
              member_count: members.length,
              status_tone: tones.includes("changed")
                ? "changed"
                : tones.every((tone) => tone === "neutral")
                ? "neutral"
                : "stable",
              display_priority: round(members.length / Math.max(1, nodes.length)),
              render_mode_hint: members.length > topNodeCount ? "collapsed" : "expanded",
              cluster_membership: null,
              node_ref: null
            }
          })

          const bundles = new Map<string, { id: string; source_id: string; target_id: string; weight: number }>()
          for (const edge of edges) {
            const [a, b] = [clusterId(edge.source), clusterId(edge.target)].sort() as [string, string]
            if (a === b) continue
            const key = `${a}~${b}`
            const bundle = bundles.get(key) ?? { id: key, source_id: a, target_id: b, weight: 0 }
            bundles.set(key, { ...bundle, weight: bundle.weight + edge.strength })
          }
          const topNodes = byPriority.slice(0, topNodeCount).map((node) =>
            nodeItem(node, priority.get(node.id)!, clusterId(node.id), at)
          )
          return {
            surface,
            mode_hint: modeHint(total),
            total_nodes: total,
            total_edges: edges.length,
            clusters,
            top_nodes: topNodes,
            bundled_edges: [...bundles.values()]
              .sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : 1))
              .slice(0, bundledEdgeCount)
              .map((bundle) => ({ ...bundle, weight: round(bundle.weight) })),
            initial_focus_ids: topNodes.slice(0, 3).map((node) => node.id),
            generated_at: at.toISOString(),
            cached: false
          }
        }
      )

      const neighborhood = Effect.fn("GraphOverview.neighborhood")(function*(
        bankId: string,
        surface: Surface,
        filter: SurfaceFilter,
        options: NeighborhoodOptions
      ) {
        if (surface === "state") {
          const found = yield* intelligence.neighborhood(bankId, filter, options)
          if (found === undefined) return yield* NotFound.of("state graph node", options.focusIds.join(", "))
          return { surface, ...found }
        }
        yield* banks.get(bankId)
        const reader = makeSurface(sql, bankId, filter)
        const focus = options.focusIds.length > 0
          ? yield* reader.byIds([...new Set(options.focusIds)])
          : (yield* reader.top(3)).nodes
        if (options.focusIds.length > 0 && focus.length === 0) {
          return yield* NotFound.of(`${surface} graph node`, options.focusIds.join(", "))
        }
        const focusNodes = focus.slice(0, options.limitNodes)
        const depthOf = new Map(focusNodes.map((node) => [node.id, 0]))
        const discovered = new Set(focus.map((node) => node.id))
        let frontier = focusNodes.map((node) => node.id)
        // Breadth first, strongest links first, until the depth or the node budget runs out.
        for (let depth = 1; depth <= options.depth && frontier.length > 0; depth++) {
          const edges = yield* reader.touching(frontier)
          const best = new Map<string, number>()
          for (const edge of edges) {
            for (const other of [edge.source, edge.target]) {
              if (discovered.has(other)) continue
              best.set(other, Math.max(best.get(other) ?? 0, edge.strength))
            }
          }
          const next = [...best.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id)
          next.forEach((id) => discovered.add(id))
          const room = Math.max(0, options.limitNodes - depthOf.size)
          frontier = next.slice(0, room)
          frontier.forEach((id) => depthOf.set(id, depth))
        }
        const ids = [...depthOf.keys()]
        const nodes = [...focusNodes, ...(yield* reader.byIds(ids.filter((id) => depthOf.get(id)! > 0)))]
        const edges = [...(yield* reader.among(ids))].sort((a, b) => b.strength - a.strength)
        const at = yield* now
        const priority = priorities(nodes, edges)
        const kept = edges.slice(0, options.limitEdges)
        return {
          surface,
          mode_hint: modeHint(nodes.length),
          focus_ids: focusNodes.map((node) => node.id),
          nodes: nodes
            .map((node) => ({
              ...nodeItem(node, priority.get(node.id) ?? 0, null, at),
              depth: depthOf.get(node.id) ?? 0
            }))
            .sort((a, b) => a.depth - b.depth || b.display_priority - a.display_priority),
          edges: kept.map(toRelation),
          total_nodes: discovered.size,
          total_edges: edges.length,
          has_more: discovered.size > nodes.length || edges.length > kept.length,
          cursor: null,
          generated_at: at.toISOString(),
          cached: false
        }
      })

      return GraphOverview.of({ summary, neighborhood })
    })
  )
}
