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

      const select = (condition: ReturnType<typeof sql.and>, order: ReturnType<typeof sql.and>, limit: number) =>
        sql<UnitRow>`
          SELECT u.id, u.text, u.fact_type, u.context, u.occurred_start, u.occurred_end, u.mentioned_at,
            u.document_id, u.chunk_id, u.tags, u.access_count, u.created_at,
            ARRAY(SELECT e.canonical_name FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
                  WHERE ue.unit_id = u.id ORDER BY e.canonical_name) AS entity_names,
            ARRAY(SELECT e.entity_type FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
                  WHERE ue.unit_id = u.id ORDER BY e.canonical_name) AS entity_types
          FROM memory_units u WHERE ${condition} ORDER BY ${order} LIMIT ${limit}`.pipe(Effect.orDie)

      const count = (condition: ReturnType<typeof sql.and>) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units u WHERE ${condition}`.pipe(
          Effect.orDie,
          Effect.map((rows) => rows[0]?.count ?? 0)
        )

      const linksAmong = (bankId: string, ids: ReadonlyArray<string>) =>
        ids.length === 0 ? Effect.succeed([]) : sql<LinkRow>`
          SELECT l.from_id, l.to_id, l.link_type, l.weight FROM memory_links l
          WHERE l.bank_id = ${bankId} AND l.from_id = ANY (${[...ids]}::text[]) AND l.to_id = ANY (${[...ids]}::text[])
          ORDER BY l.from_id, l.to_id, l.link_type`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toEdge)))

      const graph = Effect.fn("GraphView.graph")(function*(bankId: string, filter: GraphFilter) {
        yield* banks.get(bankId)
        const condition = where(bankId, filter)
        const [rows, total] = yield* Effect.all([
          select(condition, sql`coalesce(u.mentioned_at, u.occurred_start, u.created_at) DESC, u.seq DESC`, filter.limit),
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
          select(condition, sql`coalesce(u.occurred_start, u.mentioned_at) DESC, u.seq DESC`, filter.limit),
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
