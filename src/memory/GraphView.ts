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
import { tagCondition } from "./recall/TagFilter.ts"
import type { UnitRow as MemoryUnitRow } from "./MemoryUnits.ts"
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

interface LinkRow {
  readonly fromId: string
  readonly toId: string
  readonly linkType: string
  readonly weight: number
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

export const toEdge = (link: LinkRow): GraphEdge => ({
  id: `${link.fromId}:${link.toId}:${link.linkType}`,
  from: link.fromId,
  to: link.toId,
  type: link.linkType,
  weight: link.weight
})

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
          ...(filter.type ? [sql`u.fact_type = ${filter.type}`] : []),
          ...(filter.q ? [sql`u.text ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`}`] : []),
          ...(filter.tags && filter.tags.length > 0
            ? [tagCondition(sql, "u.tags", filter.tags, filter.tagsMatch ?? "all_strict")]
            : []),
          ...extra
        ])

      const unitColumns = ["id", "text", "fact_type", "context", "occurred_start", "occurred_end", "mentioned_at",
        "document_id", "chunk_id", "tags", "access_count", "created_at"]
      const columnsOf = (alias: string) => sql.literal(unitColumns.map((column) => `${alias}.${column}`).join(", "))

      // The page of units first, then the entity names and types of the whole page in one aggregate (up to 1,000
      // nodes: a subquery per node would run 2,000 little plans). `order` names its columns on the given alias.
      const select = (condition: ReturnType<typeof sql.and>, order: (alias: "u" | "p") => string, limit: number) =>
        sql<UnitRow>`
          WITH picked AS (
            SELECT ${columnsOf("u")}, u.seq FROM memory_units u
            WHERE ${condition} ORDER BY ${sql.literal(order("u"))} LIMIT ${limit})
          SELECT ${columnsOf("p")}, coalesce(n.entity_names, '{}') AS entity_names,
            coalesce(n.entity_types, '{}') AS entity_types
          FROM picked p LEFT JOIN (${entityNamesOfPicked(sql, { types: true })}) n ON n.unit_id = p.id
          ORDER BY ${sql.literal(order("p"))}`.pipe(Effect.orDie)

      const count = (condition: ReturnType<typeof sql.and>) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units u WHERE ${condition}`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows[0]?.count ?? 0)
        )

      // Every link leaving the set, found through the primary key (one index range per id), kept when its other
      // end is in the set too. Testing `to_id = ANY (ids)` in SQL compares each link with every id (25k links ×
      // 1,000 ids for a full graph), and a join against the set is at the mercy of the generic plan's row estimate
      // for an array parameter (measured 20 s); the few links that leave the set cost less than either.
      const linksAmong = (bankId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0 ? Effect.succeed([]) : sql<LinkRow>`
          SELECT l.from_id, l.to_id, l.link_type, l.weight FROM memory_links l
          WHERE l.bank_id = ${bankId} AND l.from_id = ANY (${[...ids]}::text[])
          ORDER BY l.from_id, l.to_id, l.link_type`.pipe(
          Effect.orDie,
          Effect.map((rows) => {
            const inSet = new Set(ids)
            return rows.filter((row) => inSet.has(row.toId)).map(toEdge)
          })
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
        return { nodes: rows.map(toNode), edges, table_rows: rows.map(toTableRow), total_units: total, limit: filter.limit }
      })

      // The newest `limit` memories that have a time, shown oldest first.
      const timeline = Effect.fn("GraphView.timeline")(function*(bankId: string, filter: GraphFilter) {
        yield* banks.get(bankId)
        const condition = where(bankId, filter, [sql`coalesce(u.occurred_start, u.mentioned_at) IS NOT NULL`])
        const [rows, total] = yield* Effect.all([
          // Along index memory_units_timeline_order.
          select(condition, (t) => `coalesce(${t}.occurred_start, ${t}.mentioned_at) DESC, ${t}.seq DESC`, filter.limit),
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
