/**
 * The evidence view of a bank: its memories as graph nodes with the links retain stored between them
 * (semantic, temporal, entity and causal edges, with weights), and the same memories laid out in time order.
 * Read-only; filters are the type, a text match and tags (strict "all" by default, as the spec sets it).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import type { NotFound } from "../domain/Errors.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"
import type { FactType } from "../domain/Memory.ts"
import type { TagsMatch } from "../domain/Recall.ts"
import { liveAt } from "./forgetting/Expiry.ts"
import { tagCondition } from "./recall/TagFilter.ts"
import type { UnitRow as MemoryUnitRow } from "./UnitRow.ts"
import { entityNamesOfPicked } from "./UnitEntityNames.ts"

export interface GraphFilter {
  readonly type?: FactType | undefined
  readonly q?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly tagsMatch?: TagsMatch | undefined
  readonly limit: number
}

/** A memory row as the list routes read it, less what a graph node does not show, plus its access count. */
interface UnitRow extends Omit<MemoryUnitRow, "metadata" | "sourceFactIds" | "confidence" | "createdAt"> {
  readonly accessCount: number
  readonly createdAt: Date
  readonly entityTypes: ReadonlyArray<string | null> | null
}

export interface GraphEdge {
  readonly id: string
  readonly from: string
  readonly to: string
  readonly type: string
  readonly weight: number
}

/** When a memory happened, else when it was said, else when it was stored. */
const dateOf = (row: UnitRow) => row.occurredStart ?? row.mentionedAt ?? row.createdAt

const labelOf = (text: string) => (text.length <= 80 ? text : `${text.slice(0, 79)}…`)

const toNode = (row: UnitRow) => ({
  id: row.id,
  label: labelOf(row.text),
  text: row.text,
  type: row.factType,
  entities: row.entityNames ?? [],
  tags: row.tags ?? [],
  context: row.context,
  date: dateOf(row).toISOString(),
  occurred_start: iso(row.occurredStart),
  occurred_end: iso(row.occurredEnd),
  mentioned_at: iso(row.mentionedAt),
  document_id: row.documentId,
  access_count: row.accessCount
})

/** The table view of the same memories; `entities` is one readable string ("Alice (PERSON), Acme"). */
const toTableRow = (row: UnitRow) => ({
  id: row.id,
  text: row.text,
  context: row.context,
  date: dateOf(row).toISOString(),
  type: row.factType,
  entities: (row.entityNames ?? [])
    .map((name, index) => {
      const type = row.entityTypes?.[index]
      return type ? `${name} (${type})` : name
    })
    .join(", "),
  tags: row.tags ?? [],
  document_id: row.documentId,
  chunk_id: row.chunkId,
  occurred_start: iso(row.occurredStart),
  occurred_end: iso(row.occurredEnd),
  mentioned_at: iso(row.mentionedAt),
  access_count: row.accessCount
})

/** Links as `linksAmong` reads them: a line per link, `from, to, type, weight` separated by tabs. */
const parseLinks = (lines: string | null): Array<GraphEdge> => {
  if (lines === null) return []
  return lines.split("\n").map((line) => {
    const [from, to, type, weight] = line.split("\t") as [string, string, string, string]
    return { id: `${from}:${to}:${type}`, from, to, type, weight: Number(weight) }
  })
}

export class GraphView extends Context.Service<GraphView, {
  readonly graph: (bankId: string, filter: GraphFilter) => Effect.Effect<{
    readonly nodes: ReadonlyArray<ReturnType<typeof toNode>>
    readonly edges: ReadonlyArray<GraphEdge>
    readonly table_rows: ReadonlyArray<ReturnType<typeof toTableRow>>
    readonly total_units: number
    readonly limit: number
  }, NotFound>
  readonly timeline: (bankId: string, filter: GraphFilter) => Effect.Effect<{
    readonly items: ReadonlyArray<ReturnType<typeof toNode>>
    readonly edges: ReadonlyArray<GraphEdge>
    readonly total_items: number
    readonly limit: number
  }, NotFound>
  /** The links between the given memories of the bank (both ends in the set). */
  readonly linksAmong: (bankId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<GraphEdge>>
}>()("engram/memory/GraphView") {
  static readonly layer = Layer.effect(
    GraphView,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks

      const where = (bankId: string, filter: GraphFilter, extra: ReadonlyArray<ReturnType<typeof sql.and>> = []) =>
        sql.and([
          sql`u.bank_id = ${bankId}`,
          liveAt(sql, "u", new Date()),
          ...(filter.type ? [sql`u.fact_type = ${filter.type}`] : []),
          ...(filter.q ? [sql`u.text ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`}`] : []),
          ...(filter.tags && filter.tags.length > 0
            ? [tagCondition(sql, "u.tags", filter.tags, filter.tagsMatch ?? "all_strict")]
            : []),
          ...extra
        ])

      const unitColumns = [
        "id",
        "text",
        "fact_type",
        "context",
        "occurred_start",
        "occurred_end",
        "mentioned_at",
        "document_id",
        "chunk_id",
        "tags",
        "created_at"
      ]
      const columnsOf = (alias: string) => sql.literal(unitColumns.map((column) => `${alias}.${column}`).join(", "))

      // The page of units first, then the entity names and types of the whole page in one aggregate (up to 1,000
      // nodes: a subquery per node would run 2,000 little plans). Not prepared: planned for the limit at hand, it
      // probes the mentions of the page's units through their index; a generic plan, guessing the limit, may scan
      // all of them (235k at 100k memories). `order` names its columns on the given alias.
      const select = (condition: ReturnType<typeof sql.and>, order: (alias: "u" | "p") => string, limit: number) =>
        sql<UnitRow>`
          WITH picked AS (
            SELECT ${columnsOf("u")}, u.seq FROM memory_units u
            WHERE ${condition} ORDER BY ${sql.literal(order("u"))} LIMIT ${limit})
          SELECT ${columnsOf("p")}, coalesce(n.entity_names, '{}') AS entity_names,
            coalesce(n.entity_types, '{}') AS entity_types, coalesce(c.access_count, 0) AS access_count
          FROM picked p LEFT JOIN (${entityNamesOfPicked(sql, { types: true })}) n ON n.unit_id = p.id
          LEFT JOIN memory_access_counts c ON c.unit_id = p.id
          ORDER BY ${sql.literal(order("p"))}`.unprepared.pipe(Effect.orDie)

      const count = (condition: ReturnType<typeof sql.and>) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units u WHERE ${condition}`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows[0]?.count ?? 0)
        )

      // The links with both ends in the set: those leaving it, through the primary key (one index range per id), kept
      // when the other end is in it too. That end is compared as an expression, not as a second index condition, so
      // the set is hashed once (measured 65 against 95 ms for 1,000 nodes on a 100k bank), and the statement is not
      // prepared, so it is planned for the ids at hand: under a generic plan the array is an unknown parameter, never
      // hashed, and a join against it was at the mercy of its row estimate (measured 20 s). The links arrive as one
      // string, a line per link: read row by row, the 20k links of a full graph cost 350 ms in the driver. A weight is
      // written as the double it reads as (the driver's value), not as the shorter float4 text.
      const linksAmong = (bankId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0 ? Effect.succeed([]) : sql<{ links: string | null }>`
          SELECT string_agg(concat_ws(E'\t', l.from_id, l.to_id, l.link_type, l.weight::float8), E'\n'
            ORDER BY l.from_id, l.to_id, l.link_type) AS links
          FROM memory_links l
          WHERE l.bank_id = ${bankId} AND l.from_id = ANY (${[...ids]}::text[])
            AND (l.to_id || '') = ANY (${[...ids]}::text[])`.unprepared.pipe(
          Effect.orDie,
          Effect.map(([row]) => parseLinks(row?.links ?? null))
        )

      const graph = Effect.fn("GraphView.graph")(function*(bankId: string, filter: GraphFilter) {
        yield* banks.get(bankId)
        const condition = where(bankId, filter)
        const [rows, total] = yield* Effect.all([
          // Newest first, along index memory_units_graph_order.
          select(
            condition,
            (t) => `coalesce(${t}.mentioned_at, ${t}.occurred_start, ${t}.created_at) DESC, ${t}.seq DESC`,
            filter.limit
          ),
          count(condition)
        ])
        const edges = yield* linksAmong(bankId, rows.map((row) => row.id))
        return {
          nodes: rows.map(toNode),
          edges,
          table_rows: rows.map(toTableRow),
          total_units: total,
          limit: filter.limit
        }
      })

      // The newest `limit` memories that have a time, shown oldest first.
      const timeline = Effect.fn("GraphView.timeline")(function*(bankId: string, filter: GraphFilter) {
        yield* banks.get(bankId)
        const condition = where(bankId, filter, [sql`coalesce(u.occurred_start, u.mentioned_at) IS NOT NULL`])
        const [rows, total] = yield* Effect.all([
          // Along index memory_units_timeline_order.
          select(
            condition,
            (t) => `coalesce(${t}.occurred_start, ${t}.mentioned_at) DESC, ${t}.seq DESC`,
            filter.limit
          ),
          count(condition)
        ])
        const ordered = [...rows].reverse()
        const edges = yield* linksAmong(bankId, ordered.map((row) => row.id))
        return { items: ordered.map(toNode), edges, total_items: total, limit: filter.limit }
      })

      return GraphView.of({ graph, timeline, linksAmong })
    })
  )
}
