/**
 * Moving documents between banks: an export is a background `document_export` operation that writes a transfer
 * archive (`TransferArchive`) to the file store and reports its download URL in the operation's result; an import
 * checks the uploaded archive at once (a bad one is refused with 400 and changes nothing), stages it, and a
 * `document_import` operation writes its documents through the ordinary memory writer — re-embedded with this
 * bank's model, entities resolved anew, no language model. Each document is one transaction.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BankLocks } from "../bank/BankLocks.ts"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { OnConflict } from "../domain/DocumentOps.ts"
import { isoOrNull as iso } from "../domain/IsoTime.ts"
import { StoredFiles } from "../files/StoredFiles.ts"
import { Embeddings, modelKey } from "../models/Embeddings.ts"
import {
  consolidateTask,
  makeConsolidationRequests,
  observationsEnabled
} from "../memory/consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../memory/recall/GraphRecall.ts"
import { chunkHash, contentHash } from "../memory/retain/ContentHash.ts"
import type { PreparedFact } from "../memory/retain/MemoryWriter.ts"
import { makeMemoryRemoval } from "../memory/forgetting/MemoryDeletion.ts"
import { shownText } from "../memory/forgetting/DocumentText.ts"
import { liveAt, notAllExpired } from "../memory/forgetting/Expiry.ts"
import { ExpiryWakeups } from "../memory/forgetting/ExpiryWakeups.ts"
import { writeBatch } from "../memory/retain/MemoryWriter.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import type { ArchivedDocument, ArchivedObservation } from "./TransferArchive.ts"
import { decodeArchive, encodeArchive } from "./TransferArchive.ts"

export const exportTask = "document_export"
export const importTask = "document_import"

const ExportPayload = Schema.Struct({
  document_ids: Schema.NullOr(Schema.Array(Schema.String)),
  include_observations: Schema.Boolean
})
const ImportPayload = Schema.Struct({ storage_key: Schema.String, on_conflict: OnConflict })

/** Where a stored file is fetched from; the client's export helper requests this path on its base URL. */
export const downloadPath = (key: string) => `/v1/default/files/download/${key}`

const asTaskFailure = (message: string) => () => new TaskFailure({ message, retryable: false })

export class DocumentTransfer extends Context.Service<DocumentTransfer, {
  readonly submitExport: (bankId: string, request: {
    readonly documentIds: ReadonlyArray<string> | undefined
    readonly includeObservations: boolean
  }) => Effect.Effect<{ readonly operationId: string; readonly status: string }, NotFound | ValidationError>
  readonly submitImport: (
    bankId: string,
    archive: Uint8Array,
    onConflict: OnConflict
  ) => Effect.Effect<{ readonly operationId: string; readonly status: string }, ValidationError>
}>()("engram/documents/DocumentTransfer") {
  static readonly layer = Layer.effect(
    DocumentTransfer,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const removal = yield* makeMemoryRemoval
      const operations = yield* Operations
      const registry = yield* TaskRegistry
      const files = yield* StoredFiles
      const embeddings = yield* Embeddings
      const graph = yield* GraphRecall
      const config = yield* EngramConfig
      const expiries = yield* ExpiryWakeups
      const consolidation = yield* makeConsolidationRequests

      const submitExport = Effect.fn("DocumentTransfer.submitExport")(function*(bankId: string, request: {
        readonly documentIds: ReadonlyArray<string> | undefined
        readonly includeObservations: boolean
      }) {
        yield* banks.get(bankId)
        const ids = request.documentIds === undefined || request.documentIds.length === 0
          ? null
          : [...new Set(request.documentIds)]
        if (ids !== null && request.includeObservations) {
          return yield* ValidationError.single(
            "include_observations",
            "observations can only be exported with the whole bank (leave out document_id)",
            "query"
          )
        }
        if (ids !== null) {
          const found = yield* sql<{ documentId: string }>`SELECT document_id FROM documents
            WHERE bank_id = ${bankId} AND document_id IN ${sql.in(ids)}`.pipe(Effect.orDie)
          const known = new Set(found.map((row) => row.documentId))
          const missing = ids.find((id) => !known.has(id))
          if (missing !== undefined) return yield* NotFound.of("document", missing)
        }
        const operation = yield* operations.submit({
          bankId,
          taskType: exportTask,
          itemsCount: ids?.length ?? 0,
          documentId: ids?.length === 1 ? ids[0]! : null,
          payload: { document_ids: ids, include_observations: request.includeObservations }
        })
        return { operationId: operation.id, status: operation.status }
      })

      const submitImport = Effect.fn("DocumentTransfer.submitImport")(function*(
        bankId: string,
        archive: Uint8Array,
        onConflict: OnConflict
      ) {
        const content = yield* decodeArchive(archive)
        yield* banks.ensure(bankId)
        const key = yield* files.put({
          bankId,
          purpose: "import",
          filename: "import.zip",
          contentType: "application/zip",
          extension: ".zip",
          bytes: archive
        })
        const operation = yield* operations.submit({
          bankId,
          taskType: importTask,
          itemsCount: content.documents.length,
          payload: { storage_key: key, on_conflict: onConflict }
        })
        return { operationId: operation.id, status: operation.status }
      })

      /** The bank's documents (all, or the named ones) with their chunks, facts, entity names and causal links. */
      const readDocuments = Effect.fn("DocumentTransfer.readDocuments")(function*(
        bankId: string,
        ids: ReadonlyArray<string> | null
      ) {
        // What has expired is left out, its documents and chunks with it: an archive holds nothing past its expiry.
        const now = new Date()
        const documents = yield* sql<{
          documentId: string
          metadata: Record<string, unknown>
          tags: ReadonlyArray<string>
          context: string | null
          originalText: string | null
          createdAt: Date
        }>`SELECT d.document_id, d.metadata, d.tags, d.context, ${
          shownText(sql, "d", now)
        } AS original_text, d.created_at
          FROM documents d
          WHERE d.bank_id = ${bankId} ${ids === null ? sql`` : sql`AND d.document_id IN ${sql.in(ids)}`}
            AND ${notAllExpired(sql, "d", now, "document")}
          ORDER BY d.created_at, d.document_id`
        const positions = new Map<string, readonly [number, number]>()
        const archived: Array<ArchivedDocument> = []
        for (const [documentIndex, document] of documents.entries()) {
          const chunks = yield* sql<{ id: string; chunkIndex: number; text: string }>`
            SELECT c.id, c.chunk_index, c.text FROM chunks c
            WHERE c.bank_id = ${bankId} AND c.document_id = ${document.documentId}
              AND ${notAllExpired(sql, "c", now, "chunk")}
            ORDER BY c.chunk_index, c.id`
          const facts = yield* sql<{
            id: string
            text: string
            factType: "world" | "experience"
            context: string | null
            occurredStart: Date | null
            occurredEnd: Date | null
            mentionedAt: Date | null
            metadata: Record<string, string> | null
            tags: ReadonlyArray<string> | null
            observationScopes: unknown
            chunkId: string | null
            expiresAt: Date | null
            entityNames: ReadonlyArray<string> | null
          }>`SELECT u.id, u.text, u.fact_type, u.context, u.occurred_start, u.occurred_end, u.mentioned_at, u.metadata,
              u.tags, u.observation_scopes, u.chunk_id, u.expires_at,
              (SELECT array_agg(e.canonical_name ORDER BY e.canonical_name) FROM unit_entities ue
                JOIN entities e ON e.id = ue.entity_id WHERE ue.unit_id = u.id) AS entity_names
            FROM memory_units u
            WHERE u.bank_id = ${bankId} AND u.document_id = ${document.documentId}
              AND u.fact_type IN ('world', 'experience') AND ${liveAt(sql, "u", now)}
            ORDER BY u.seq`
          const index = new Map(facts.map((fact, factIndex) => [fact.id, factIndex]))
          facts.forEach((fact, factIndex) => positions.set(fact.id, [documentIndex, factIndex]))
          const links = facts.length === 0 ? [] : yield* sql<{ fromId: string; toId: string; linkType: string }>`
            SELECT from_id, to_id, link_type FROM memory_links
            WHERE bank_id = ${bankId} AND from_id IN ${sql.in(facts.map((fact) => fact.id))}
              AND link_type IN ('causes', 'caused_by', 'enables', 'prevents')`
          const chunkIndex = new Map(chunks.map((chunk) => [chunk.id, chunk.chunkIndex]))
          archived.push({
            document_id: document.documentId,
            metadata: document.metadata,
            tags: [...document.tags],
            context: document.context,
            original_text: document.originalText,
            created_at: iso(document.createdAt),
            chunks: chunks.map((chunk) => ({ chunk_index: chunk.chunkIndex, text: chunk.text })),
            facts: facts.map((fact) => ({
              text: fact.text,
              fact_type: fact.factType,
              context: fact.context,
              occurred_start: iso(fact.occurredStart),
              occurred_end: iso(fact.occurredEnd),
              mentioned_at: iso(fact.mentionedAt),
              metadata: fact.metadata ?? {},
              tags: [...(fact.tags ?? [])],
              ...(fact.observationScopes === null || fact.observationScopes === undefined
                ? {}
                : { observation_scopes: fact.observationScopes }),
              // An expiry travels with the fact: imported elsewhere, it is forgotten at the same instant.
              ...(fact.expiresAt === null ? {} : { expires_at: fact.expiresAt.toISOString() }),
              chunk_index: fact.chunkId === null ? null : chunkIndex.get(fact.chunkId) ?? null,
              entities: [...(fact.entityNames ?? [])]
            })),
            causal_links: links.flatMap((link) => {
              const from = index.get(link.fromId)
              const to = index.get(link.toId)
              return from === undefined || to === undefined
                ? []
                : [{ from, to, relation: link.linkType as "causes" | "caused_by" | "enables" | "prevents" }]
            })
          })
        }
        return { documents: archived, positions }
      })

      const readObservations = Effect.fn("DocumentTransfer.readObservations")(function*(
        bankId: string,
        positions: ReadonlyMap<string, readonly [number, number]>
      ) {
        const rows = yield* sql<
          { text: string; tags: ReadonlyArray<string> | null; sourceFactIds: ReadonlyArray<string> | null }
        >`
          SELECT text, tags, source_fact_ids FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type = 'observation' ORDER BY seq`
        return rows.map((row): ArchivedObservation => ({
          text: row.text,
          tags: [...(row.tags ?? [])],
          sources: (row.sourceFactIds ?? []).flatMap((id) => {
            const position = positions.get(id)
            return position === undefined ? [] : [[position[0], position[1]] as const]
          })
        }))
      })

      yield* registry.register(exportTask, (operation) =>
        Effect.gen(function*() {
          const payload = yield* Schema.decodeUnknownEffect(ExportPayload)(operation.payload).pipe(
            Effect.mapError(asTaskFailure("the stored export payload is invalid"))
          )
          const { documents, positions } = yield* readDocuments(operation.bankId, payload.document_ids).pipe(
            Effect.orDie
          )
          const observations = payload.include_observations
            ? yield* readObservations(operation.bankId, positions).pipe(Effect.orDie)
            : null
          const exportedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
          const bytes = encodeArchive({ bankId: operation.bankId, exportedAt, documents, observations })
          const filename = `${operation.bankId}-documents.zip`
          const key = yield* files.put({
            bankId: operation.bankId,
            purpose: "export",
            filename,
            contentType: "application/zip",
            extension: ".zip",
            bytes
          })
          return {
            download_url: downloadPath(key),
            storage_key: key,
            byte_size: bytes.length,
            filename,
            documents_count: documents.length,
            facts_count: documents.reduce((sum, document) => sum + document.facts.length, 0),
            observations_count: observations?.length ?? 0
          }
        }))

      /** One archived document written as retain would write it, under `documentId`, in its own transaction. */
      const importDocument = Effect.fn("DocumentTransfer.importDocument")(function*(
        bankId: string,
        document: ArchivedDocument,
        documentId: string,
        replace: boolean,
        operationId: string
      ) {
        const vectors = yield* embeddings.embedDocuments(document.facts.map((fact) => fact.text))
        const chunkIds = new Map(document.chunks.map((chunk) => {
          const hash = chunkHash(chunk.text)
          return [chunk.chunk_index, {
            id: `${operationId}:${documentId}:${chunk.chunk_index}`,
            hash,
            text: chunk.text
          }] as const
        }))
        const ids = document.facts.map(() => crypto.randomUUID())
        const facts = document.facts.map((fact, factIndex): PreparedFact => ({
          id: ids[factIndex]!,
          text: fact.text,
          factType: fact.fact_type,
          occurredStart: fact.occurred_start === null ? null : new Date(fact.occurred_start),
          occurredEnd: fact.occurred_end === null ? null : new Date(fact.occurred_end),
          mentionedAt: fact.mentioned_at === null ? null : new Date(fact.mentioned_at),
          context: fact.context,
          documentId,
          chunkId: fact.chunk_index === null ? null : chunkIds.get(fact.chunk_index)?.id ?? null,
          metadata: fact.metadata,
          tags: fact.tags,
          observationScopes: fact.observation_scopes ?? null,
          expiresAt: fact.expires_at == null ? null : new Date(fact.expires_at),
          contentHash: contentHash(fact.text),
          embedding: vectors[factIndex]!,
          entities: fact.entities.map((name) => ({ name, type: null })),
          causes: document.causal_links
            .filter((link) => link.from === factIndex && ids[link.to] !== undefined)
            .map((link) => ({ targetId: ids[link.to]!, relation: link.relation })),
          itemIndex: 0,
          factIndex
        }))
        // An import over an existing document replaces it: its old memories go with everything derived from them.
        const replaced = removal.session(bankId, "replace")
        if (replace) yield* removal.flush(bankId)
        const written = yield* locks.withWriteLock(bankId)(
          writeBatch({
            bankId,
            operationId,
            embeddingModel: modelKey(embeddings.identity),
            dimensions: embeddings.identity.dimensions,
            documents: [{
              documentId,
              replace,
              metadata: Object.fromEntries(
                Object.entries(document.metadata).map((
                  [key, value]
                ) => [key, typeof value === "string" ? value : JSON.stringify(value)])
              ),
              tags: document.tags,
              context: document.context,
              originalText: document.original_text ?? document.chunks.map((chunk) => chunk.text).join("\n\n"),
              keptChunkIds: []
            }],
            chunks: [...chunkIds.entries()].map(([chunkIndex, chunk]) => ({
              id: chunk.id,
              documentId,
              chunkIndex,
              text: chunk.text,
              hash: chunk.hash
            })),
            facts
          }, replaced.remove).pipe(sql.withTransaction, Effect.orDie, Effect.provideService(SqlClient.SqlClient, sql))
        )
        yield* replaced.afterCommit
        return written.created.length
      })

      yield* registry.register(importTask, (operation) =>
        Effect.gen(function*() {
          const payload = yield* Schema.decodeUnknownEffect(ImportPayload)(operation.payload).pipe(
            Effect.mapError(asTaskFailure("the stored import payload is invalid"))
          )
          const bank = yield* banks.get(operation.bankId).pipe(
            Effect.mapError(asTaskFailure("the bank no longer exists"))
          )
          const file = yield* files.get(payload.storage_key).pipe(
            Effect.mapError(asTaskFailure("the uploaded archive is no longer stored"))
          )
          const content = yield* decodeArchive(file.bytes).pipe(
            Effect.mapError((error) => new TaskFailure({ message: error.detail, retryable: false }))
          )
          let imported = 0
          let skipped = 0
          let memories = 0
          const renamed: Array<{ from: string; to: string }> = []
          for (const document of content.documents) {
            const exists = (yield* sql`SELECT 1 FROM documents
              WHERE bank_id = ${operation.bankId} AND document_id = ${document.document_id}`.pipe(Effect.orDie))
              .length > 0
            if (exists && payload.on_conflict === "skip") {
              skipped++
              continue
            }
            // A re-run after a crash finds its own earlier writes as conflicts: `skip` and `replace` are idempotent.
            const documentId = exists && payload.on_conflict === "new-id"
              ? `${document.document_id}-${crypto.randomUUID().slice(0, 8)}`
              : document.document_id
            if (documentId !== document.document_id) renamed.push({ from: document.document_id, to: documentId })
            memories += yield* importDocument(operation.bankId, document, documentId, exists, operation.id).pipe(
              Effect.mapError((error) =>
                new TaskFailure({ message: `embedding failed: ${error.message}`, retryable: true })
              )
            )
            imported++
          }
          yield* graph.changed(operation.bankId)
          // Imported expiries are the scheduler's to keep, as a retain's are; one already past is swept at once.
          if (content.documents.some((document) => document.facts.some((fact) => fact.expires_at != null))) {
            yield* expiries.notify
          }
          if (memories > 0 && observationsEnabled(bank, config.enableObservations)) {
            yield* consolidation.request(operation.bankId, consolidateTask, "retain")
          }
          yield* files.remove(payload.storage_key)
          return {
            imported,
            skipped,
            memories_created: memories,
            renamed_documents: renamed,
            observations_in_archive: content.observations?.length ?? 0
          }
        }))

      return DocumentTransfer.of({ submitExport, submitImport })
    })
  )
}
