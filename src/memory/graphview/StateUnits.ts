/**
 * The evidence the state surface is computed from (§6.1 of the behaviour reference): the bank's memories that
 * match the filters and happened (or were said, or stored) within the window, newest first, bounded, each with
 * its entity names, tags, access and proof counts and its embedding. Read-only, one statement.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { liveAt } from "../forgetting/Expiry.ts"
import { tagCondition } from "../recall/TagFilter.ts"
import { entityNamesOfPicked } from "../UnitEntityNames.ts"
import type { SurfaceFilter } from "./Surfaces.ts"
import { contentTokens, leadingEntity, negated, normalized } from "./TextSignals.ts"

/** The state surface honours the overview's filters; `window_days` counts from each memory's own time. */
export type StateFilter = SurfaceFilter

export interface StateUnit {
  readonly id: string
  readonly text: string
  /** When it happened, else when it was said, else when it was stored (epoch milliseconds). */
  readonly at: number
  readonly proofs: number
  readonly accesses: number
  readonly tags: ReadonlyArray<string>
  readonly entities: ReadonlyArray<string>
  readonly embedding: Float32Array | null
  /** The retain document the memory came from, when known: two sentences of one document are read together. */
  readonly docKey: string | null
  /** When the memory expires (epoch milliseconds; null: never): a view built with it is stale from then. */
  readonly expiresAt: number | null
}

/** The reference's bound: 25 memories per requested node, at least 250, at most 2,000. */
export const unitLimit = (limit: number) => Math.min(Math.max(limit * 25, 250), 2000)

interface Row {
  readonly id: string
  readonly text: string
  readonly at: Date
  readonly expiresAt: Date | null
  readonly proofs: number
  readonly accesses: number
  readonly tags: ReadonlyArray<string> | null
  readonly documentId: string | null
  readonly chunkId: string | null
  readonly entityNames: ReadonlyArray<string> | null
  /** Decoded by the driver's pgvector codec (layers/storage/PgVector.ts). */
  readonly embedding: Float32Array | null
}

/** Chunk ids end in `_<index>`: without it they name the document. */
const docKeyOf = (row: Row) => row.documentId ?? (row.chunkId === null ? null : row.chunkId.replace(/_\d+$/, ""))

export const loadStateUnits = (sql: SqlClient.SqlClient, bankId: string, filter: StateFilter, limit: number) => {
  const at = sql`coalesce(u.occurred_start, u.mentioned_at, u.created_at)`
  const where = sql.and([
    sql`u.bank_id = ${bankId}`,
    liveAt(sql, "u", new Date()),
    ...(filter.type ? [sql`u.fact_type = ${filter.type}`] : []),
    ...(filter.q
      ? [
        sql`(u.text ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`} OR u.context ILIKE ${`%${
          filter.q.replace(/[\\%_]/g, "\\$&")
        }%`})`
      ]
      : []),
    ...(filter.tags && filter.tags.length > 0 ? [tagCondition(sql, "u.tags", filter.tags, filter.tagsMatch)] : []),
    ...(filter.windowDays === null ? [] : [sql`${at} >= now() - make_interval(days => ${filter.windowDays})`])
  ])
  // Not prepared, as in GraphView: planned for the limit at hand.
  return sql<Row>`
    WITH picked AS (
      SELECT u.id, u.text, ${at} AS at, u.seq, greatest(1, coalesce(cardinality(u.source_fact_ids), 0)) AS proofs,
        u.tags, u.document_id, u.chunk_id, u.embedding, u.expires_at
      FROM memory_units u WHERE ${where} ORDER BY at DESC, u.seq DESC LIMIT ${limit})
    SELECT p.id, p.text, p.at, p.expires_at, p.proofs, coalesce(c.access_count, 0) AS accesses, p.tags, p.document_id,
      p.chunk_id, p.embedding, coalesce(n.entity_names, '{}') AS entity_names
    FROM picked p LEFT JOIN (${entityNamesOfPicked(sql, { types: false })}) n ON n.unit_id = p.id
    LEFT JOIN memory_access_counts c ON c.unit_id = p.id
    ORDER BY p.at DESC, p.seq DESC`.unprepared.pipe(
    Effect.orDie,
    Effect.map((rows) =>
      rows.map((row): StateUnit => ({
        id: row.id,
        text: row.text,
        at: row.at.getTime(),
        proofs: Number(row.proofs),
        accesses: Number(row.accesses),
        tags: row.tags ?? [],
        entities: row.entityNames ?? [],
        embedding: row.embedding,
        docKey: docKeyOf(row),
        expiresAt: row.expiresAt?.getTime() ?? null
      }))
    )
  )
}

// Per-memory text signals, computed once per loaded memory: pairwise checks ask for them thousands of times.
const tokensOf = new WeakMap<StateUnit, Set<string>>()
const negatedOf = new WeakMap<StateUnit, boolean>()
const leaderOf = new WeakMap<StateUnit, string | null>()
const normalizedOf = new WeakMap<StateUnit, string>()

const memo = <A>(cache: WeakMap<StateUnit, A>, unit: StateUnit, compute: () => A): A => {
  if (cache.has(unit)) return cache.get(unit)!
  const value = compute()
  cache.set(unit, value)
  return value
}

export const unitTokens = (unit: StateUnit) => memo(tokensOf, unit, () => contentTokens(unit.text))
export const unitNormalized = (unit: StateUnit) => memo(normalizedOf, unit, () => normalized(unit.text))
export const unitNegated = (unit: StateUnit) => memo(negatedOf, unit, () => negated(unit.text))
/** The entity the memory's sentence leads with, lowercased, or null. */
export const unitLeader = (unit: StateUnit) =>
  memo(leaderOf, unit, () => leadingEntity(unit.text, unit.entities)?.toLowerCase() ?? null)
