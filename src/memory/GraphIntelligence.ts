/**
 * Graph intelligence: the bank's state surface (entities and topics with statuses, change events, edges and
 * change scores), its summary and neighbourhood, and deterministic investigation — no language model. Built from
 * the bank's recent evidence and cached per parameter tuple; a cached answer is used only while the bank has had
 * no write since it was built (the bank brain's write generation) and for at most ten minutes (recency drifts). On a
 * cluster node that does not own the bank, writes made elsewhere do not move this node's generation, so there the
 * entry is also tied to where the bank's memories stand in the shared database (its data version).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../brain/BankBrains.ts"
import { Banks } from "../bank/Banks.ts"
import { ClusterNode } from "../cluster/ClusterNode.ts"
import type { NotFound } from "../domain/Errors.ts"
import type { NeighborhoodOptions } from "./graphview/OverviewTypes.ts"
import { investigate } from "./graphview/Investigate.ts"
import type { StateGraph } from "./graphview/StateGraph.ts"
import { buildStateGraph, intelligenceView } from "./graphview/StateGraph.ts"
import { stateNeighborhood, stateSummary, stateSummaryBuildLimit } from "./graphview/StateOverview.ts"
import type { StateFilter } from "./graphview/StateUnits.ts"
import { loadStateUnits, unitLimit, unitTokens } from "./graphview/StateUnits.ts"
import { contentTokens, overlap } from "./graphview/TextSignals.ts"

const cacheEntries = 128
const cacheMillis = 10 * 60_000
/** Investigate reads at least this many memories as the question's own evidence (the reference's floor). */
const recalledFloor = 12

interface Built {
  readonly graph: StateGraph
  readonly generatedAt: string
  readonly cached: boolean
}

interface CacheEntry {
  readonly generation: string
  readonly builtAt: number
  /** The first expiry among the memories it was built from (epoch ms): no read returns it from then. */
  readonly validUntil: number
  readonly graph: StateGraph
  readonly generatedAt: string
}

export class GraphIntelligence extends Context.Service<GraphIntelligence, {
  readonly intelligence: (bankId: string, filter: StateFilter, limit: number) => Effect.Effect<
    ReturnType<typeof intelligenceView> & { readonly generated_at: string; readonly cached: boolean },
    NotFound
  >
  readonly investigate: (bankId: string, query: string, filter: StateFilter, limit: number) => Effect.Effect<
    ReturnType<typeof investigate>,
    NotFound
  >
  readonly summary: (bankId: string, filter: StateFilter) => Effect.Effect<
    ReturnType<typeof stateSummary> & { readonly generated_at: string; readonly cached: boolean },
    NotFound
  >
  /** Undefined when focus ids were given and none of them is on the surface. */
  readonly neighborhood: (bankId: string, filter: StateFilter, options: NeighborhoodOptions) => Effect.Effect<
    | (NonNullable<ReturnType<typeof stateNeighborhood>> & { readonly generated_at: string; readonly cached: boolean })
    | undefined,
    NotFound
  >
}>()("engram/memory/GraphIntelligence") {
  static readonly layer = Layer.effect(
    GraphIntelligence,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const brains = yield* BankBrains
      const node = yield* ClusterNode
      /** What a cached view must still match: the local write generation, and off the owner the data version. */
      const generationOf = (bankId: string) =>
        Effect.gen(function*() {
          const local = yield* brains.generation(bankId)
          if (node.role === "off" || (yield* node.ownsBank(bankId))) return String(local)
          const version = yield* brains.dataVersion(bankId)
          return `${local}:${version.memories}.${version.seqMark}.${version.changeMark}`
        })
      // Insertion order doubles as recency of use: a hit is re-inserted, the oldest key is evicted first.
      const cache = new Map<string, CacheEntry>()

      /** The state graph over at most `units` memories, from the cache when nothing was written since. */
      const stateGraph = Effect.fn("GraphIntelligence.stateGraph")(
        function*(bankId: string, filter: StateFilter, units: number) {
          yield* banks.get(bankId)
          const generation = yield* generationOf(bankId)
          const now = yield* Clock.currentTimeMillis
          const key = JSON.stringify([
            bankId,
            filter.type,
            filter.q,
            filter.tags,
            filter.tagsMatch,
            filter.confidenceMin,
            filter.nodeKind,
            filter.windowDays,
            units
          ])
          const hit = cache.get(key)
          if (
            hit !== undefined && hit.generation === generation && now - hit.builtAt < cacheMillis &&
            now < hit.validUntil
          ) {
            cache.delete(key)
            cache.set(key, hit)
            yield* Effect.annotateCurrentSpan({ cached: true })
            return { graph: hit.graph, generatedAt: hit.generatedAt, cached: true } satisfies Built
          }
          const loaded = yield* loadStateUnits(sql, bankId, filter, units)
          const graph = buildStateGraph(loaded, filter, now)
          const generatedAt = new Date(now).toISOString()
          // Stored under the generation read before loading: a write that landed meanwhile moves it, so this entry
          // can only be used by reads that could not have seen that write anyway.
          cache.delete(key)
          const validUntil = loaded.reduce((first, unit) => Math.min(first, unit.expiresAt ?? Infinity), Infinity)
          cache.set(key, { generation, builtAt: now, validUntil, graph, generatedAt })
          while (cache.size > cacheEntries) cache.delete(cache.keys().next().value!)
          yield* Effect.annotateCurrentSpan({ cached: false, memories: loaded.length, nodes: graph.nodes.length })
          return { graph, generatedAt, cached: false } satisfies Built
        }
      )

      const intelligence = Effect.fn("GraphIntelligence.intelligence")(
        function*(bankId: string, filter: StateFilter, limit: number) {
          const built = yield* stateGraph(bankId, filter, unitLimit(limit))
          return { ...intelligenceView(built.graph, limit), generated_at: built.generatedAt, cached: built.cached }
        }
      )

      const investigateQuery = Effect.fn("GraphIntelligence.investigate")(function*(
        bankId: string,
        query: string,
        filter: StateFilter,
        limit: number
      ) {
        // The whole surface (no text filter), as in the reference; the question picks its nodes.
        const built = yield* stateGraph(bankId, { ...filter, q: undefined }, unitLimit(limit))
        // The question's own evidence: the memories sharing the most content words with it.
        const words = contentTokens(query)
        const recalled = [...built.graph.units.values()]
          .map((unit) => ({ id: unit.id, shared: overlap(words, unitTokens(unit)) }))
          .filter((entry) => entry.shared > 0)
          .sort((a, b) => b.shared - a.shared)
          .slice(0, Math.max(limit, recalledFloor))
        return investigate(built.graph, query, new Set(recalled.map((entry) => entry.id)))
      })

      const summary = Effect.fn("GraphIntelligence.summary")(function*(bankId: string, filter: StateFilter) {
        const built = yield* stateGraph(bankId, filter, unitLimit(stateSummaryBuildLimit))
        return { ...stateSummary(built.graph), generated_at: built.generatedAt, cached: built.cached }
      })

      const neighborhood = Effect.fn("GraphIntelligence.neighborhood")(function*(
        bankId: string,
        filter: StateFilter,
        options: NeighborhoodOptions
      ) {
        const built = yield* stateGraph(bankId, filter, unitLimit(stateSummaryBuildLimit))
        const found = stateNeighborhood(built.graph, options)
        return found === undefined ? undefined : { ...found, generated_at: built.generatedAt, cached: built.cached }
      })

      return GraphIntelligence.of({ intelligence, investigate: investigateQuery, summary, neighborhood })
    })
  )
}
