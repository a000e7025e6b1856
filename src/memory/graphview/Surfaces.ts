/**
 * The evidence surface the graph overview draws, read from SQL: memories are the nodes and the links retain
 * stored are the edges (strength = link weight), under the overview's memory filters. (The state surface is
 * graph intelligence's: `StateGraph`.) Read-only.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { FactType } from "../../domain/Memory.ts"
import type { TagsMatch } from "../../domain/Recall.ts"
import { liveAt } from "../forgetting/Expiry.ts"
import { tagCondition } from "../recall/TagFilter.ts"

export type Surface = "state" | "evidence"
export type NodeKind = "all" | "entity" | "topic"

export interface SurfaceFilter {
  readonly type?: FactType | undefined
  readonly q?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly tagsMatch: TagsMatch
  readonly confidenceMin: number
  readonly nodeKind: NodeKind
  /** Only memories stored in the last this many days; null for all of them. */
  readonly windowDays: number | null
}

/**
 * The spec's defaults for the overview and graph-intelligence parameters, shared by REST and MCP: all_strict tags,
 * confidence 0.55, all kinds, the last 90 days (0 or null: all of them).
 */
export const surfaceFilterOf = (query: {
  readonly type?: FactType | null | undefined
  readonly q?: string | undefined
  readonly tags?: ReadonlyArray<string> | null | undefined
  readonly tags_match?: TagsMatch | undefined
  readonly confidence_min?: number | undefined
  readonly node_kind?: NodeKind | undefined
  readonly window_days?: number | null | undefined
}): SurfaceFilter => ({
  type: query.type ?? undefined,
  q: query.q,
  tags: query.tags ?? undefined,
  tagsMatch: query.tags_match ?? "all_strict",
  confidenceMin: query.confidence_min ?? 0.55,
  nodeKind: query.node_kind ?? "all",
  windowDays: query.window_days === undefined
    ? 90
    : query.window_days === 0 || query.window_days === null
    ? null
    : query.window_days
})

export interface SurfaceNode {
  readonly id: string
  readonly kind: "memory" | "entity" | "topic"
  readonly title: string
  readonly subtitle: string
  /** How many memories stand behind the node (1 for a memory). */
  readonly mentions: number
  /** When the node's earliest and latest memories were stored. */
  readonly firstStored: Date
  readonly lastStored: Date
}

export interface SurfaceEdge {
  readonly source: string
  readonly target: string
  readonly relation: string
  readonly strength: number
  readonly evidence: number
}

export interface SurfaceReader {
  /** The surface's most important matching nodes (newest memories; most mentioned concepts) and how many match. */
  readonly top: (limit: number) => Effect.Effect<{ readonly nodes: ReadonlyArray<SurfaceNode>; readonly total: number }>
  /** The given nodes, those that exist and match the filters. */
  readonly byIds: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<SurfaceNode>>
  /** Edges at or above `confidence_min` with both ends in `ids`. */
  readonly among: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<SurfaceEdge>>
  /** Edges at or above `confidence_min` with at least one end in `ids` (the other end matching the filters). */
  readonly touching: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<SurfaceEdge>>
}

const label = (text: string) => (text.length <= 80 ? text : `${text.slice(0, 79)}…`)

export const makeSurface = (sql: SqlClient.SqlClient, bankId: string, filter: SurfaceFilter): SurfaceReader => {
  const units = sql.and([
    sql`u.bank_id = ${bankId}`,
    liveAt(sql, "u", new Date()),
    ...(filter.type ? [sql`u.fact_type = ${filter.type}`] : []),
    ...(filter.tags && filter.tags.length > 0 ? [tagCondition(sql, "u.tags", filter.tags, filter.tagsMatch)] : []),
    ...(filter.windowDays === null ? [] : [sql`u.created_at >= now() - make_interval(days => ${filter.windowDays})`])
  ])
  const textMatch = (column: string) =>
    filter.q ? sql`${sql.literal(column)} ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`}` : sql`TRUE`
  const ids = (list: ReadonlyArray<string>) => sql`${[...list]}::text[]`
  const orDie = <A>(effect: Effect.Effect<A, unknown>) => Effect.orDie(effect)

  const memories = sql.and([units, textMatch("u.text")])
  type Row = { id: string; text: string; factType: string; createdAt: Date; at: Date }
  const select = (where: ReturnType<typeof sql.and>, limit: number) =>
    sql<
      Row
    >`SELECT u.id, u.text, u.fact_type, u.created_at, coalesce(u.occurred_start, u.mentioned_at, u.created_at) AS at
      FROM memory_units u WHERE ${where}
      ORDER BY coalesce(u.mentioned_at, u.occurred_start, u.created_at) DESC, u.seq DESC LIMIT ${limit}`
  const toNode = (row: Row): SurfaceNode => ({
    id: row.id,
    kind: "memory",
    title: label(row.text),
    subtitle: `${row.factType} · ${row.at.toISOString().slice(0, 10)}`,
    mentions: 1,
    firstStored: row.createdAt,
    lastStored: row.createdAt
  })
  const links = (where: ReturnType<typeof sql.and>) =>
    orDie(sql<{ fromId: string; toId: string; linkType: string; weight: number }>`
      SELECT l.from_id, l.to_id, l.link_type, l.weight FROM memory_links l
      WHERE l.bank_id = ${bankId} AND l.weight >= ${filter.confidenceMin} AND ${where}`).pipe(
      Effect.map((rows) =>
        rows.map((row) => ({
          source: row.fromId,
          target: row.toId,
          relation: row.linkType,
          strength: Math.min(1, row.weight),
          evidence: 1
        }))
      )
    )
  const byIds = (list: ReadonlyArray<string>) =>
    list.length === 0 ?
      Effect.succeed([]) :
      orDie(select(sql.and([memories, sql`u.id = ANY (${ids(list)})`]), list.length))
        .pipe(Effect.map((rows) => rows.map(toNode)))
  return {
    top: (limit) =>
      orDie(Effect.all([
        select(memories, limit),
        sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units u WHERE ${memories}`
      ])).pipe(Effect.map(([rows, count]) => ({ nodes: rows.map(toNode), total: count[0]?.count ?? 0 }))),
    byIds,
    among: (list) =>
      list.length === 0
        ? Effect.succeed([])
        : links(sql`l.from_id = ANY (${ids(list)}) AND l.to_id = ANY (${ids(list)})`),
    touching: (list) =>
      list.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
        const found = yield* links(sql`(l.from_id = ANY (${ids(list)}) OR l.to_id = ANY (${ids(list)}))`)
        const inside = new Set(list)
        const others = [...new Set(found.flatMap((edge) => [edge.source, edge.target]).filter((id) => !inside.has(id)))]
        const matching = new Set((yield* byIds(others)).map((node) => node.id))
        return found.filter((edge) =>
          (inside.has(edge.source) || matching.has(edge.source)) &&
          (inside.has(edge.target) || matching.has(edge.target))
        )
      })
  }
}
