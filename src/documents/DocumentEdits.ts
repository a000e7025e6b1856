/**
 * Document operations beyond list/get/delete: new tags for a document (carried to its memories, whose
 * observations are rebuilt under the new tags), its chunks in order, and reprocessing — the document's stored
 * text extracted again from scratch by a background `document_reprocess` operation, replacing its memories
 * (curation of those memories is reset, as the document is the source of truth).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BankLocks } from "../bank/BankLocks.ts"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import type { UpdateDocumentRequest } from "../domain/DocumentOps.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"
import { makeConsolidationRequests, observationsEnabled } from "../memory/consolidation/ConsolidationRequests.ts"
import { requeueEditedFacts } from "../memory/consolidation/FactRequeue.ts"
import { joinedChunkTexts, shownText } from "../memory/forgetting/DocumentText.ts"
import { notAllExpired } from "../memory/forgetting/Expiry.ts"
import { GraphRecall } from "../memory/recall/GraphRecall.ts"
import { Retain } from "../memory/retain/Retain.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"

export const reprocessTask = "document_reprocess"

const ReprocessPayload = Schema.Struct({ document_id: Schema.String })
const decodeReprocess = Schema.decodeUnknownEffect(ReprocessPayload)

interface ChunkRow {
  readonly id: string
  readonly documentId: string
  readonly chunkIndex: number
  readonly text: string
  readonly createdAt: Date
}

export class DocumentEdits extends Context.Service<DocumentEdits, {
  readonly update: (
    bankId: string,
    documentId: string,
    request: UpdateDocumentRequest
  ) => Effect.Effect<{ readonly success: boolean }, NotFound | ValidationError>
  readonly chunks: (
    bankId: string,
    documentId: string,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{
    readonly items: ReadonlyArray<{
      chunk_id: string
      document_id: string
      bank_id: string
      chunk_index: number
      chunk_text: string
      created_at: string
    }>
    readonly total: number
  }, NotFound>
  readonly reprocess: (bankId: string, documentId: string) => Effect.Effect<{ readonly operationId: string }, NotFound>
}>()("engram/documents/DocumentEdits") {
  static readonly layer = Layer.effect(
    DocumentEdits,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const graph = yield* GraphRecall
      const config = yield* EngramConfig
      const consolidation = yield* makeConsolidationRequests
      const operations = yield* Operations
      const retain = yield* Retain
      const registry = yield* TaskRegistry

      const requireDocument = Effect.fn("DocumentEdits.requireDocument")(function*(bankId: string, documentId: string) {
        yield* banks.get(bankId)
        // A document whose memories have all expired is gone, as the sweep will delete it.
        const rows = yield* sql`SELECT 1 FROM documents d WHERE d.bank_id = ${bankId} AND d.document_id = ${documentId}
          AND ${notAllExpired(sql, "d", new Date(), "document")}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* NotFound.of("document", documentId)
      })

      const update = Effect.fn("DocumentEdits.update")(function*(
        bankId: string,
        documentId: string,
        request: UpdateDocumentRequest
      ) {
        const bank = yield* banks.get(bankId)
        if (request.tags === undefined || request.tags === null) {
          return yield* ValidationError.single("body", "give at least one field to change (tags)")
        }
        const tags = [...new Set(request.tags)]
        const observationsOn = observationsEnabled(bank, config.enableObservations)
        const outcome = yield* locks.withWriteLock(bankId)(
          Effect.gen(function*() {
            const found = yield* sql`UPDATE documents SET tags = ${tags}::text[], updated_at = now()
            WHERE bank_id = ${bankId} AND document_id = ${documentId} RETURNING document_id`
            if (found.length === 0) return undefined
            // The tags write goes to the units themselves, so the change log tells each bank brain which ones moved.
            const facts = yield* sql<{ id: string }>`UPDATE memory_units SET tags = ${tags}::text[], updated_at = now()
            WHERE bank_id = ${bankId} AND document_id = ${documentId} AND fact_type IN ('world', 'experience')
            RETURNING id`
            return yield* requeueEditedFacts(consolidation, bankId, facts.map((row) => row.id), observationsOn)
          }).pipe(sql.withTransaction, Effect.orDie, Effect.provideService(SqlClient.SqlClient, sql))
        )
        if (outcome === undefined) return yield* NotFound.of("document", documentId)
        yield* graph.changed(bankId)
        if (outcome) yield* consolidation.wake(bankId)
        return { success: true }
      })

      const chunks = Effect.fn("DocumentEdits.chunks")(function*(
        bankId: string,
        documentId: string,
        page: { readonly limit: number; readonly offset: number }
      ) {
        yield* requireDocument(bankId, documentId)
        // A chunk whose memories have all expired is left out, as the sweep will delete it.
        const live = notAllExpired(sql, "c", new Date(), "chunk")
        const [rows, total] = yield* Effect.all([
          sql<ChunkRow>`SELECT c.id, c.document_id, c.chunk_index, c.text, c.created_at FROM chunks c
            WHERE c.bank_id = ${bankId} AND c.document_id = ${documentId} AND ${live}
            ORDER BY c.chunk_index, c.created_at, c.id LIMIT ${page.limit} OFFSET ${page.offset}`,
          sql<{ count: number }>`SELECT count(*)::int AS count FROM chunks c
            WHERE c.bank_id = ${bankId} AND c.document_id = ${documentId} AND ${live}`
        ]).pipe(Effect.orDie)
        return {
          items: rows.map((row) => ({
            chunk_id: row.id,
            document_id: row.documentId,
            bank_id: bankId,
            chunk_index: row.chunkIndex,
            chunk_text: row.text,
            created_at: iso(row.createdAt) ?? ""
          })),
          total: total[0]?.count ?? 0
        }
      })

      const reprocess = Effect.fn("DocumentEdits.reprocess")(function*(bankId: string, documentId: string) {
        yield* requireDocument(bankId, documentId)
        const operation = yield* operations.submit({
          bankId,
          taskType: reprocessTask,
          itemsCount: 1,
          documentId,
          payload: { document_id: documentId }
        })
        return { operationId: operation.id }
      })

      // The document as stored is the input: its text, context, metadata and tags, said when its memories were. A
      // part whose memories have all expired is not read back (it would come back as memories that never expire).
      yield* registry.register(reprocessTask, (operation) =>
        Effect.gen(function*() {
          const now = new Date()
          const payload = yield* decodeReprocess(operation.payload).pipe(
            Effect.mapError(() =>
              new TaskFailure({ message: "the stored reprocess payload is invalid", retryable: false })
            )
          )
          const rows = yield* sql<{
            originalText: string | null
            context: string | null
            metadata: Record<string, unknown>
            tags: ReadonlyArray<string>
            saidAt: Date | null
            chunkText: string | null
          }>`SELECT ${shownText(sql, "d", now)} AS original_text, d.context, d.metadata, d.tags,
              (SELECT min(u.mentioned_at) FROM memory_units u
                WHERE u.bank_id = d.bank_id AND u.document_id = d.document_id) AS said_at,
              ${joinedChunkTexts(sql, "d", notAllExpired(sql, "c", now, "chunk"))} AS chunk_text
            FROM documents d WHERE d.bank_id = ${operation.bankId} AND d.document_id = ${payload.document_id}`
            .pipe(Effect.orDie)
          const document = rows[0]
          if (document === undefined) {
            return yield* new TaskFailure({
              message: `document '${payload.document_id}' no longer exists`,
              retryable: false
            })
          }
          const text = document.originalText?.trim() ? document.originalText : document.chunkText
          if (text === null || text.trim() === "") {
            return yield* new TaskFailure({
              message: `document '${payload.document_id}' has no stored text`,
              retryable: false
            })
          }
          const metadata = Object.fromEntries(
            Object.entries(document.metadata).filter((entry): entry is [string, string] => typeof entry[1] === "string")
          )
          const outcome = yield* retain.retainForOperation(
            operation.bankId,
            [{
              content: text,
              document_id: payload.document_id,
              context: document.context,
              metadata,
              tags: [...document.tags],
              timestamp: document.saidAt === null ? "unset" : document.saidAt.toISOString(),
              update_mode: "replace"
            }],
            operation.id,
            { reextract: true }
          )
          return {
            document_id: payload.document_id,
            memories_created: outcome.created,
            duplicates_skipped: outcome.duplicates
          }
        }))

      return DocumentEdits.of({ update, chunks, reprocess })
    })
  )
}
