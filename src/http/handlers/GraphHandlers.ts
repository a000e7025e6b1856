/**
 * REST handlers for the graph views: the evidence graph and the timeline (`GraphView`), the summary and the
 * neighbourhood (`GraphOverview`), graph intelligence and investigation (`GraphIntelligence`), with the spec's
 * defaults applied here.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { FactType } from "../../domain/Memory.ts"
import type { TagsMatch } from "../../domain/Recall.ts"
import { GraphIntelligence } from "../../memory/GraphIntelligence.ts"
import { GraphOverview } from "../../memory/GraphOverview.ts"
import { type NodeKind, type SurfaceFilter, surfaceFilterOf } from "../../memory/graphview/Surfaces.ts"
import { GraphView } from "../../memory/GraphView.ts"
import { EngramApi } from "../api/Api.ts"

/** `?tags=a` arrives as a string, `?tags=a&tags=b` as a list. */
const listOf = (value: string | ReadonlyArray<string> | undefined) =>
  value === undefined ? undefined : typeof value === "string" ? [value] : value

const filterOf = (
  query: {
    readonly type?: FactType
    readonly limit?: number
    readonly q?: string
    readonly tags?: string | ReadonlyArray<string>
    readonly tags_match?: TagsMatch
  },
  defaultLimit: number
) => ({
  type: query.type,
  q: query.q,
  tags: listOf(query.tags),
  tagsMatch: query.tags_match ?? "all_strict" as const,
  limit: query.limit ?? defaultLimit
})

/** The overview and intelligence filter with the spec's defaults (`surfaceFilterOf`), tags from the query string. */
const overviewFilter = (query: {
  readonly type?: FactType | undefined
  readonly q?: string
  readonly tags?: string | ReadonlyArray<string> | undefined
  readonly tags_match?: TagsMatch
  readonly confidence_min?: number
  readonly node_kind?: NodeKind
  readonly window_days?: number | null
}): SurfaceFilter => surfaceFilterOf({ ...query, tags: listOf(query.tags) })

export const GraphHandlers = HttpApiBuilder.group(
  EngramApi,
  "graph",
  Effect.fn(function*(handlers) {
    const view = yield* GraphView
    const overview = yield* GraphOverview
    const intelligence = yield* GraphIntelligence
    return handlers.handleAll({
      // Both views are built in the declared shape from plain values, so they are written as JSON without the
      // schema's encoding pass over every node and link (for 1,000 nodes and 20k links it cost 120 ms of 600).
      graph: ({ params, query }) =>
        view.graph(params.bank_id, filterOf(query, 1000)).pipe(
          Effect.map((graph) => HttpServerResponse.jsonUnsafe(graph))
        ),
      timeline: ({ params, query }) =>
        view.timeline(params.bank_id, filterOf(query, 500)).pipe(
          Effect.map((timeline) => HttpServerResponse.jsonUnsafe(timeline))
        ),
      summary: ({ params, query }) => overview.summary(params.bank_id, query.surface ?? "state", overviewFilter(query)),
      neighborhood: ({ params, query }) =>
        overview.neighborhood(params.bank_id, query.surface ?? "state", overviewFilter(query), {
          focusIds: listOf(query.focus_ids) ?? [],
          depth: query.depth ?? 1,
          limitNodes: query.limit_nodes ?? 60,
          limitEdges: query.limit_edges ?? 140
        }),
      intelligence: ({ params, query }) =>
        intelligence.intelligence(params.bank_id, overviewFilter(query), query.limit ?? 18),
      investigate: ({ params, payload }) =>
        intelligence.investigate(
          params.bank_id,
          payload.query,
          overviewFilter({
            ...payload,
            type: payload.type ?? undefined,
            tags: payload.tags ?? undefined
          }),
          payload.limit ?? 18
        )
    })
  })
)
