/**
 * The `codebase_approve` task: hydrates the chunks routed to memory into the bank, in batches of 20. Each chunk is
 * one document `codebase:{codebase}:chunk:{chunk_key}`. Mode `direct` stores the chunk text itself as one world
 * fact with `path:start-end::label` context (no language model); mode `retain` goes through the full retain path.
 * A chunk that was memory with the same content in the previously approved snapshot is reused, not rewritten;
 * documents of chunks that are no longer memory (changed away, deleted, re-routed) are removed.
 */
import { Clock, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankLocks } from "../bank/BankLocks.ts"
import type { MemoryItem } from "../domain/Memory.ts"
import { Documents } from "../memory/Documents.ts"
import { modelKey } from "../memory/Reembedding.ts"
import { GraphRecall } from "../memory/recall/GraphRecall.ts"
import { contentHash } from "../memory/retain/ContentHash.ts"
import { makeMemoryRemoval } from "../memory/forgetting/MemoryDeletion.ts"
import { writeBatch } from "../memory/retain/MemoryWriter.ts"
import { Retain } from "../memory/retain/Retain.ts"
import { Embeddings } from "../models/Embeddings.ts"
import type { OperationRecord } from "../bank/OperationStore.ts"
import { TaskFailure } from "../bank/TaskRegistry.ts"
import { TableStatistics } from "../storage/TableStatistics.ts"
import { CodebaseStore } from "./CodebaseStore.ts"
import { sha1 } from "./intel/Chunker.ts"

export const approveTask = "codebase_approve"
const batchSize = 20

export interface ApprovePayload {
  readonly codebase_id: string
  readonly snapshot_id: string
  readonly memory_ingest_mode: "direct" | "retain"
}

interface MemoryChunk {
  readonly id: string
  readonly chunkKey: string
  readonly contentHash: string
  readonly contentText: string
  readonly path: string
  readonly language: string | null
  readonly label: string
  readonly parentFqName: string | null
  readonly clusterLabel: string | null
  readonly startLine: number
  readonly endLine: number
}

export const documentIdOf = (codebaseId: string, chunkKey: string) => `codebase:${codebaseId}:chunk:${chunkKey}`
const uuidOf = (text: string) => {
  const hash = sha1(text)
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`
}

export const makeApprovalHandler = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* CodebaseStore
  const embeddings = yield* Embeddings
  const locks = yield* BankLocks
  const removal = yield* makeMemoryRemoval
  const graph = yield* GraphRecall
  const statistics = yield* TableStatistics
  const documents = yield* Documents
  const retain = yield* Retain

  const tagsOf = (
    codebaseId: string,
    chunk: MemoryChunk
  ) => ["scope:codebase", `codebase:${codebaseId}`, ...(chunk.language === null ? [] : [`language:${chunk.language}`])]
  const contextOf = (chunk: MemoryChunk) => `${chunk.path}:${chunk.startLine}-${chunk.endLine}::${chunk.label}`

  const writeDirect = (bankId: string, codebaseId: string, operationId: string, batch: ReadonlyArray<MemoryChunk>) =>
    Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const vectors = yield* embeddings.embedDocuments(batch.map((chunk) => chunk.contentText))
      // Each chunk's document replaces the one an earlier approval wrote, with everything derived from its memory.
      const replaced = removal.session(bankId, "replace")
      yield* removal.flush(bankId)
      const written = yield* locks.withWriteLock(bankId)(
        writeBatch({
          bankId,
          operationId,
          embeddingModel: modelKey(embeddings.identity),
          dimensions: embeddings.identity.dimensions,
          documents: batch.map((chunk) => ({
            documentId: documentIdOf(codebaseId, chunk.chunkKey),
            replace: true,
            metadata: { path: chunk.path, start_line: String(chunk.startLine), end_line: String(chunk.endLine) },
            tags: tagsOf(codebaseId, chunk),
            context: contextOf(chunk),
            originalText: chunk.contentText,
            keptChunkIds: []
          })),
          chunks: batch.map((chunk) => ({
            id: uuidOf(`${bankId}|${documentIdOf(codebaseId, chunk.chunkKey)}|${chunk.contentHash}`),
            documentId: documentIdOf(codebaseId, chunk.chunkKey),
            chunkIndex: 0,
            text: chunk.contentText,
            hash: chunk.contentHash
          })),
          facts: batch.map((chunk, index) => ({
            id: crypto.randomUUID(),
            text: chunk.contentText,
            factType: "world" as const,
            occurredStart: now,
            occurredEnd: null,
            mentionedAt: now,
            context: contextOf(chunk),
            documentId: documentIdOf(codebaseId, chunk.chunkKey),
            chunkId: uuidOf(`${bankId}|${documentIdOf(codebaseId, chunk.chunkKey)}|${chunk.contentHash}`),
            metadata: { path: chunk.path, lines: `${chunk.startLine}-${chunk.endLine}` },
            tags: tagsOf(codebaseId, chunk),
            observationScopes: null,
            contentHash: contentHash(`${chunk.path}:${chunk.startLine}\n${chunk.contentText}`),
            embedding: vectors[index]!,
            entities: [],
            causes: [],
            itemIndex: index,
            factIndex: 0
          }))
        }, replaced.remove).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))
      )
      yield* replaced.afterCommit
      yield* statistics.noteWrites(written.created.length)
    })

  const writeRetain = (bankId: string, codebaseId: string, operationId: string, batch: ReadonlyArray<MemoryChunk>) => {
    const items: Array<MemoryItem> = batch.map((chunk) => ({
      content: chunk.contentText,
      context:
        `ASD-reviewed code chunk from ${chunk.path}:${chunk.startLine}-${chunk.endLine} | label=${chunk.label} | ` +
        `symbol=${chunk.parentFqName ?? ""} | cluster=${chunk.clusterLabel ?? ""} | language=${chunk.language ?? ""}`,
      document_id: documentIdOf(codebaseId, chunk.chunkKey),
      tags: tagsOf(codebaseId, chunk)
    }))
    return retain.retainForOperation(bankId, items, `${operationId}:${batch[0]!.chunkKey}`)
  }

  return (operation: OperationRecord) =>
    Effect.gen(function*() {
      const payload = operation.payload as ApprovePayload
      const snapshot = yield* store.snapshot(payload.snapshot_id)
      if (Option.isNone(snapshot)) {
        return yield* new TaskFailure({ message: "the snapshot no longer exists", retryable: false })
      }
      const bankId = snapshot.value.bankId
      const codebase = yield* store.find(bankId, payload.codebase_id)
      if (Option.isNone(codebase)) {
        return yield* new TaskFailure({ message: "the codebase no longer exists", retryable: false })
      }
      const previousApproved = codebase.value.approvedSnapshotId
      const chunks = yield* sql<MemoryChunk>`
        SELECT id, chunk_key, content_hash, content_text, path, language, label, parent_fq_name, cluster_label, start_line, end_line
        FROM codebase_chunks WHERE snapshot_id = ${payload.snapshot_id} AND route_target = 'memory'
        ORDER BY path, start_line, chunk_key`.pipe(Effect.orDie)
      const before = previousApproved === null ? [] : yield* sql<{ chunkKey: string; contentHash: string }>`
        SELECT chunk_key, content_hash FROM codebase_chunks
        WHERE snapshot_id = ${previousApproved} AND document_id IS NOT NULL`.pipe(Effect.orDie)
      const reusable = new Set(before.map((row) => `${row.chunkKey}\u0000${row.contentHash}`))
      // Documents already written by an earlier attempt of this same approval are kept as well.
      const done = new Set((yield* sql<{ chunkKey: string }>`SELECT chunk_key FROM codebase_chunks
        WHERE snapshot_id = ${payload.snapshot_id} AND route_target = 'memory' AND document_id IS NOT NULL`.pipe(
        Effect.orDie
      ))
        .map((row) => row.chunkKey))
      const fresh = chunks.filter((chunk) =>
        !reusable.has(`${chunk.chunkKey}\u0000${chunk.contentHash}`) && !done.has(chunk.chunkKey)
      )
      const reused = chunks.length - fresh.length
      for (let start = 0; start < fresh.length; start += batchSize) {
        const batch = fresh.slice(start, start + batchSize)
        yield* (payload.memory_ingest_mode === "retain"
          ? writeRetain(bankId, payload.codebase_id, operation.id, batch).pipe(Effect.asVoid)
          : writeDirect(bankId, payload.codebase_id, operation.id, batch).pipe(
            Effect.catchTag("SqlError", (error) => Effect.die(error)),
            Effect.mapError((error) =>
              new TaskFailure({ message: `embedding failed: ${error.message}`, retryable: error.retryable })
            )
          ))
        yield* sql`UPDATE codebase_chunks SET document_id = 'codebase:' || ${payload.codebase_id} || ':chunk:' || chunk_key
          WHERE snapshot_id = ${payload.snapshot_id} AND id IN ${sql.in(batch.map((chunk) => chunk.id))}`.pipe(
          Effect.orDie
        )
      }
      if (reused > 0) {
        yield* sql`UPDATE codebase_chunks SET document_id = 'codebase:' || ${payload.codebase_id} || ':chunk:' || chunk_key
          WHERE snapshot_id = ${payload.snapshot_id} AND route_target = 'memory' AND document_id IS NULL`.pipe(
          Effect.orDie
        )
      }
      if (fresh.length > 0 && payload.memory_ingest_mode === "direct") yield* graph.changed(bankId)

      // Prune: memory of the previously approved snapshot that this one no longer routes to memory.
      const keep = new Set(chunks.map((chunk) => chunk.chunkKey))
      const stale = before.filter((row) => !keep.has(row.chunkKey))
      let deleted = 0
      for (const row of stale) {
        const removed = yield* documents.remove(bankId, documentIdOf(payload.codebase_id, row.chunkKey)).pipe(
          Effect.result
        )
        if (removed._tag === "Success") deleted++
      }
      if (stale.length > 0) {
        yield* sql`UPDATE codebase_chunks SET document_id = NULL WHERE snapshot_id = ${payload.snapshot_id}
          AND chunk_key IN ${sql.in(stale.map((row) => row.chunkKey))}`.pipe(Effect.orDie)
      }
      const unrouted = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM codebase_chunks
        WHERE snapshot_id = ${payload.snapshot_id} AND route_target = 'unrouted'`.pipe(Effect.orDie)
      const status = (unrouted[0]?.count ?? 0) > 0 ? "partially_approved" : "approved"
      yield* store.setStatus(payload.snapshot_id, status)
      yield* sql`UPDATE codebases SET approved_snapshot_id = ${payload.snapshot_id}, updated_at = now()
        WHERE id = ${payload.codebase_id}`.pipe(Effect.orDie)
      return {
        codebase_id: payload.codebase_id,
        snapshot_id: payload.snapshot_id,
        status,
        memory_ingest_mode: payload.memory_ingest_mode,
        hydrated_chunks: fresh.length,
        reused_chunks: reused,
        deleted_chunks: deleted,
        applied_routes: chunks.length
      }
    })
})
