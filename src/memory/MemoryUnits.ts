/**
 * Reading and deleting memory units: the list with type and text filters, one unit with its entities and
 * tags, clearing by type (the bank and its profile stay), and the chunk a unit came from. A delete takes what was
 * derived from the memories with them (`MemoryDeletion`).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { NotFound } from "../domain/Errors.ts"
import type { FactType, MemoryUnitView } from "../domain/Memory.ts"
import { makeMemoryDeletion } from "./forgetting/MemoryDeletion.ts"
import { entityNamesOfPicked } from "./UnitEntityNames.ts"
import { toUnitView, type UnitRow } from "./UnitRow.ts"
import { liveAt, notAllExpired } from "./forgetting/Expiry.ts"

export class MemoryUnits extends Context.Service<MemoryUnits, {
  readonly list: (bankId: string, filter: {
    readonly type?: FactType | undefined
    readonly q?: string | undefined
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<{ readonly items: ReadonlyArray<MemoryUnitView>; readonly total: number }, NotFound>
  readonly get: (bankId: string, id: string) => Effect.Effect<MemoryUnitView, NotFound>
  /** Rows of the given units of the bank (that also meet `where`, on alias `u`), in no particular order. */
  readonly byIds: (
    bankId: string,
    ids: ReadonlyArray<string>,
    where?: ReturnType<SqlClient.SqlClient["and"]>
  ) => Effect.Effect<ReadonlyArray<UnitRow>>
  /** Deletes the bank's memories of one type, or all of them (with documents, chunks and entities). */
  readonly clear: (bankId: string, type: FactType | undefined) => Effect.Effect<number, NotFound>
  readonly remove: (bankId: string, id: string) => Effect.Effect<void, NotFound>
  readonly chunk: (chunkId: string) => Effect.Effect<{
    readonly id: string
    readonly bankId: string
    readonly documentId: string | null
    readonly chunkIndex: number
    readonly text: string
    readonly createdAt: Date
  }, NotFound>
}>()("engram/memory/MemoryUnits") {
  static readonly layer = Layer.effect(
    MemoryUnits,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const deletion = yield* makeMemoryDeletion

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
        "metadata",
        "tags",
        "source_fact_ids",
        "confidence",
        "created_at",
        "superseded_by",
        "expires_at"
      ]
      const columns = sql.literal(unitColumns.map((column) => `u.${column}`).join(", "))
      const pickedColumns = sql.literal(unitColumns.map((column) => `p.${column}`).join(", "))
      // The units first (in a CTE named `picked`), then the entity names of all of them in one aggregate: a
      // subquery per row costs a plan node setup per row (measured 1.5-2× slower for 80 rows on PGlite).
      const withEntityNames = (picked: Statement.Fragment, order: Statement.Fragment) =>
        sql<UnitRow>`
        WITH picked AS (${picked})
        SELECT ${pickedColumns}, coalesce(n.entity_names, '{}') AS entity_names
        FROM picked p LEFT JOIN (${entityNamesOfPicked(sql, { types: false })}) n ON n.unit_id = p.id ${order}`

      const list = Effect.fn("MemoryUnits.list")(function*(bankId: string, filter: {
        readonly type?: FactType | undefined
        readonly q?: string | undefined
        readonly limit: number
        readonly offset: number
      }) {
        yield* banks.get(bankId)
        const now = new Date(yield* Clock.currentTimeMillis)
        const where = sql.and([
          sql`u.bank_id = ${bankId}`,
          liveAt(sql, "u", now),
          ...(filter.type ? [sql`u.fact_type = ${filter.type}`] : []),
          ...(filter.q ? [sql`u.text ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`}`] : [])
        ])
        const [rows, total] = yield* Effect.all([
          withEntityNames(
            sql`SELECT ${columns}, u.seq FROM memory_units u WHERE ${where}
              ORDER BY coalesce(u.mentioned_at, u.created_at) DESC, u.seq DESC LIMIT ${filter.limit} OFFSET ${filter.offset}`,
            sql`ORDER BY coalesce(p.mentioned_at, p.created_at) DESC, p.seq DESC`
          ),
          sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units u WHERE ${where}`
        ]).pipe(Effect.orDie)
        return { items: rows.map(toUnitView), total: total[0]?.count ?? 0 }
      })

      const get = Effect.fn("MemoryUnits.get")(function*(bankId: string, id: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* withEntityNames(
          sql`SELECT ${columns} FROM memory_units u WHERE u.bank_id = ${bankId} AND u.id = ${id} AND ${
            liveAt(sql, "u", now)
          }`,
          sql``
        ).pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of("memory", id)
        return toUnitView(row)
      })

      // Both delete with everything derived from what they delete (forget's own path): see MemoryDeletion.
      const clear = Effect.fn("MemoryUnits.clear")(function*(bankId: string, type: FactType | undefined) {
        yield* banks.get(bankId)
        return yield* deletion(bankId, (removeMemories) =>
          Effect.gen(function*() {
            const rows = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId}
              ${type ? sql`AND fact_type = ${type}` : sql``}`
            yield* removeMemories(rows.map((row) => row.id))
            if (type === undefined) {
              yield* sql`DELETE FROM chunks WHERE bank_id = ${bankId}`
              yield* sql`DELETE FROM documents WHERE bank_id = ${bankId}`
            }
            return rows.length
          }))
      })

      const remove = Effect.fn("MemoryUnits.remove")(function*(bankId: string, id: string) {
        const deleted = yield* deletion(bankId, (removeMemories) =>
          Effect.gen(function*() {
            const rows = yield* sql<
              { id: string }
            >`SELECT id FROM memory_units WHERE bank_id = ${bankId} AND id = ${id}`
            return (yield* removeMemories(rows.map((row) => row.id))).memories.length
          }))
        if (deleted === 0) return yield* NotFound.of("memory", id)
      })

      const chunk = Effect.fn("MemoryUnits.chunk")(function*(chunkId: string) {
        const rows = yield* sql<{
          id: string
          bankId: string
          documentId: string | null
          chunkIndex: number
          text: string
          createdAt: Date
        }>`SELECT c.id, c.bank_id, c.document_id, c.chunk_index, c.text, c.created_at FROM chunks c
          WHERE c.id = ${chunkId} AND ${notAllExpired(sql, "c", new Date(), "chunk")}`.pipe(Effect.orDie)
        return yield* Option.match(Option.fromNullishOr(rows[0]), {
          onNone: () => Effect.fail(NotFound.of("chunk", chunkId)),
          onSome: Effect.succeed
        })
      })

      // Recall loads every candidate through here; an expired memory never comes back, whatever the caller asked.
      const byIds = (bankId: string, ids: ReadonlyArray<string>, where?: ReturnType<typeof sql.and>) =>
        ids.length === 0
          ? Effect.succeed([] as ReadonlyArray<UnitRow>)
          : Effect.flatMap(Clock.currentTimeMillis, (now) =>
            withEntityNames(
              sql`SELECT ${columns} FROM memory_units u
                WHERE ${
                sql.and([
                  sql`u.bank_id = ${bankId}`,
                  sql`u.id IN ${sql.in(ids)}`,
                  liveAt(sql, "u", new Date(now)),
                  ...(where ? [where] : [])
                ])
              }`,
              sql``
            )).pipe(Effect.orDie)

      return MemoryUnits.of({ list, get, byIds, clear, remove, chunk })
    })
  )
}
