/**
 * Documents: the groups of retained content named by `document_id`. Deleting one deletes its memories with
 * everything derived from them.
 */
import { Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { NotFound } from "../domain/Errors.ts"
import { shownText } from "./forgetting/DocumentText.ts"
import { liveAt, notAllExpired } from "./forgetting/Expiry.ts"
import { makeMemoryDeletion } from "./forgetting/MemoryDeletion.ts"

interface DocumentRow {
  readonly documentId: string
  readonly bankId: string
  readonly metadata: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly context: string | null
  readonly originalText: string | null
  readonly memoryUnitCount: number
  readonly chunkCount: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

const toView = (row: DocumentRow) => ({
  id: row.documentId,
  document_id: row.documentId,
  bank_id: row.bankId,
  metadata: row.metadata,
  tags: [...row.tags],
  context: row.context,
  memory_unit_count: row.memoryUnitCount,
  chunk_count: row.chunkCount,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString()
})

export class Documents extends Context.Service<Documents, {
  readonly list: (
    bankId: string,
    filter: { readonly q?: string | undefined; readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly items: ReadonlyArray<ReturnType<typeof toView>>; readonly total: number }, NotFound>
  readonly get: (bankId: string, documentId: string) => Effect.Effect<
    ReturnType<typeof toView> & { readonly original_text: string | null; readonly content_hash: string | null },
    NotFound
  >
  readonly remove: (bankId: string, documentId: string) => Effect.Effect<number, NotFound>
}>()("engram/memory/Documents") {
  static readonly layer = Layer.effect(
    Documents,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const deletion = yield* makeMemoryDeletion

      // Counts the memories still there now (an expired one is gone from every read before the sweep deletes it).
      // The text only where it is shown (one document): with an expired chunk it is rebuilt from the others.
      const select = (text = sql`d.original_text`) =>
        sql`
        SELECT d.document_id, d.bank_id, d.metadata, d.tags, d.context, ${text} AS original_text, d.created_at, d.updated_at,
          (SELECT count(*)::int FROM memory_units u WHERE u.bank_id = d.bank_id AND u.document_id = d.document_id
            AND ${liveAt(sql, "u", new Date())}) AS memory_unit_count,
          (SELECT count(*)::int FROM chunks c WHERE c.bank_id = d.bank_id AND c.document_id = d.document_id)
            AS chunk_count
        FROM documents d`

      const list = Effect.fn("Documents.list")(function*(bankId: string, filter: {
        readonly q?: string | undefined
        readonly limit: number
        readonly offset: number
      }) {
        yield* banks.get(bankId)
        const where = sql.and([
          sql`d.bank_id = ${bankId}`,
          notAllExpired(sql, "d", new Date(), "document"),
          ...(filter.q ? [sql`d.document_id ILIKE ${`%${filter.q.replace(/[\\%_]/g, "\\$&")}%`}`] : [])
        ])
        const [rows, total] = yield* Effect.all([
          sql<DocumentRow>`${select()} WHERE ${where} ORDER BY d.updated_at DESC, d.document_id
            LIMIT ${filter.limit} OFFSET ${filter.offset}`,
          sql<{ count: number }>`SELECT count(*)::int AS count FROM documents d WHERE ${where}`
        ]).pipe(Effect.orDie)
        return { items: rows.map(toView), total: total[0]?.count ?? 0 }
      })

      const get = Effect.fn("Documents.get")(function*(bankId: string, documentId: string) {
        const now = new Date()
        const rows = yield* sql<DocumentRow>`${select(shownText(sql, "d", now))} WHERE d.bank_id = ${bankId}
          AND d.document_id = ${documentId} AND ${notAllExpired(sql, "d", now, "document")}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* NotFound.of("document", documentId)
        // The hash clients compare to tell whether a re-sent document changed (SHA-256 of the stored text).
        const contentHash = row.originalText === null
          ? null
          : createHash("sha256").update(row.originalText).digest("hex")
        return { ...toView(row), original_text: row.originalText, content_hash: contentHash }
      })

      // The document's memories go with everything derived from them (forget's own path: see MemoryDeletion).
      const remove = Effect.fn("Documents.remove")(function*(bankId: string, documentId: string) {
        const deleted = yield* deletion(bankId, (removeMemories) =>
          Effect.gen(function*() {
            const found = yield* sql`SELECT document_id FROM documents
              WHERE bank_id = ${bankId} AND document_id = ${documentId}`
            if (found.length === 0) return -1
            const units = yield* sql<{ id: string }>`SELECT id FROM memory_units
              WHERE bank_id = ${bankId} AND document_id = ${documentId}`
            yield* removeMemories(units.map((row) => row.id), documentId)
            yield* sql`DELETE FROM documents WHERE bank_id = ${bankId} AND document_id = ${documentId}`
            yield* sql`DELETE FROM chunks WHERE bank_id = ${bankId} AND document_id = ${documentId}`
            return units.length
          }))
        if (deleted === -1) return yield* NotFound.of("document", documentId)
        return deleted
      })

      return Documents.of({ list, get, remove })
    })
  )
}
