/** Entities of a bank, by mention count, and one entity with the observations about it. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { NotFound } from "../domain/Errors.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"
import { liveAt } from "./forgetting/Expiry.ts"

interface EntityRow {
  readonly id: string
  readonly canonicalName: string
  readonly entityType: string | null
  readonly mentionCount: number
  readonly firstSeen: Date | null
  readonly lastSeen: Date | null
  readonly metadata: Record<string, unknown> | null
}

export class Entities extends Context.Service<Entities, {
  readonly list: (bankId: string, page: { readonly limit: number; readonly offset: number }) => Effect.Effect<{
    readonly items: ReadonlyArray<{
      id: string
      canonical_name: string
      entity_type: string | null
      mention_count: number
      first_seen: string | null
      last_seen: string | null
    }>
    readonly total: number
  }, NotFound>
  readonly detail: (bankId: string, entityId: string) => Effect.Effect<{
    id: string
    canonical_name: string
    mention_count: number
    first_seen: string | null
    last_seen: string | null
    metadata: Record<string, unknown> | null
    observations: ReadonlyArray<{ text: string; mentioned_at: string | null }>
  }, NotFound>
}>()("engram/memory/Entities") {
  static readonly layer = Layer.effect(
    Entities,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks

      const list = Effect.fn("Entities.list")(
        function*(bankId: string, page: { readonly limit: number; readonly offset: number }) {
          yield* banks.get(bankId)
          const [rows, total] = yield* Effect.all([
            sql<EntityRow>`SELECT id, canonical_name, entity_type, mention_count, first_seen, last_seen, metadata
            FROM entities WHERE bank_id = ${bankId}
            ORDER BY mention_count DESC, canonical_name LIMIT ${page.limit} OFFSET ${page.offset}`,
            sql<{ count: number }>`SELECT count(*)::int AS count FROM entities WHERE bank_id = ${bankId}`
          ]).pipe(Effect.orDie)
          return {
            items: rows.map((row) => ({
              id: row.id,
              canonical_name: row.canonicalName,
              entity_type: row.entityType,
              mention_count: row.mentionCount,
              first_seen: iso(row.firstSeen),
              last_seen: iso(row.lastSeen)
            })),
            total: total[0]?.count ?? 0
          }
        }
      )

      const detail = Effect.fn("Entities.detail")(function*(bankId: string, entityId: string) {
        const rows = yield* sql<EntityRow>`SELECT id, canonical_name, entity_type, mention_count, first_seen, last_seen,
            metadata FROM entities WHERE bank_id = ${bankId} AND id = ${entityId}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of("entity", entityId)
        const observations = yield* sql<{ text: string; mentionedAt: Date | null }>`
          SELECT u.text, coalesce(u.mentioned_at, u.created_at) AS mentioned_at
          FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
          WHERE ue.entity_id = ${entityId} AND u.fact_type = 'observation' AND ${liveAt(sql, "u", new Date())}
          ORDER BY coalesce(u.mentioned_at, u.created_at) DESC LIMIT 50`.pipe(Effect.orDie)
        return {
          id: row.id,
          canonical_name: row.canonicalName,
          mention_count: row.mentionCount,
          first_seen: iso(row.firstSeen),
          last_seen: iso(row.lastSeen),
          metadata: { ...row.metadata, ...(row.entityType ? { entity_type: row.entityType } : {}) },
          observations: observations.map((o) => ({ text: o.text, mentioned_at: iso(o.mentionedAt) }))
        }
      })

      return Entities.of({ list, detail })
    })
  )
}
