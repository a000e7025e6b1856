/**
 * Retain: raw content becomes facts, entities, times and links. Synchronous retain runs in the caller's fiber;
 * asynchronous retain stores a `batch_retain` operation (split into sub-batches) that the bank's actor runs.
 * Extraction uses the configured language model, or the offline extractor when there is none.
 */
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BankLocks } from "../../bank/BankLocks.ts"
import { Banks } from "../../bank/Banks.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { BankEvents } from "../../events/BankEvents.ts"
import type { Bank } from "../../domain/Bank.ts"
import { ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import type { MemoryItem, RetainRequest } from "../../domain/Memory.ts"
import { MemoryItem as MemoryItemSchema } from "../../domain/Memory.ts"
import { EmbeddingError, Embeddings } from "../../models/Embeddings.ts"
import { Llm, LlmError, type LlmUsage } from "../../models/Llm.ts"
import { Operations } from "../../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import type { OperationRecord } from "../../bank/OperationStore.ts"
import { modelKey } from "../Reembedding.ts"
import { detectWriteTimeAnomalies } from "../anomaly/WriteTimeDetection.ts"
import { TableStatistics } from "../../storage/TableStatistics.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { autoConsolidates, consolidateTask, makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { chunkHash, contentHash } from "./ContentHash.ts"
import type { ExtractedFact, ExtractionInput } from "./ExtractedFact.ts"
import { extractWithLlm } from "./LlmExtractor.ts"
import type {
  PreparedChunk,
  PreparedDocument,
  PreparedFact,
  RemoveReplaced,
  WriteBatch,
  WriteResult
} from "./MemoryWriter.ts"
import { screenItems } from "./MemoryDefense.ts"
import { makeMemoryRemoval } from "../forgetting/MemoryDeletion.ts"
import { writeBatch } from "./MemoryWriter.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import { groupable, groupFacts, makeGroupCommit, type RetainWrite } from "./GroupCommit.ts"
import { extractingOffline } from "./OfflineExtractor.ts"
import { chunkText } from "./Tokens.ts"
import { ExpiryWakeups } from "../forgetting/ExpiryWakeups.ts"
import { runSliced } from "../../brain/Sliced.ts"

export interface RetainOutcome {
  readonly created: number
  readonly duplicates: number
  readonly usage: LlmUsage
}

const zeroUsage: LlmUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
const addUsage = (a: LlmUsage, b: LlmUsage): LlmUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  totalTokens: a.totalTokens + b.totalTokens
})

/**
 * Items per sub-batch of an asynchronous retain: each sub-batch is one operation (its progress and retries), and
 * queued sub-batches run together, their writes sharing transactions.
 */
export const subBatchSize = 25

/** Queued retains a bank runs at once when a language model extracts their facts (each holds a model call). */
const llmRetainsTogether = 4

const BatchPayload = Schema.Struct({
  items: Schema.Array(MemoryItemSchema),
  document_tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  item_offset: Schema.optionalKey(Schema.Int)
})
const decodePayload = Schema.decodeUnknownEffect(BatchPayload)
const decodePayloadOption = Schema.decodeUnknownOption(BatchPayload)

const resolveTimestamp = (timestamp: string | null | undefined, now: Date): Date | null =>
  timestamp === undefined || timestamp === null ? now : timestamp === "unset" ? null : new Date(timestamp)

/** Whether a written batch changed what the bank's brain holds: new memories, or a document written or replaced. */
const changesBrain = (batch: WriteBatch, written: WriteResult) =>
  written.created.length > 0 || batch.documents.length > 0

/** Stable ids make a re-run of the same operation write the same chunks, which the database then ignores. */
const stableId = (...parts: ReadonlyArray<string | number>) => {
  const hash = chunkHash(parts.join("\u0000"))
  return `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`
}

export class Retain extends Context.Service<Retain, {
  /**
   * Stores the items now; fails with 503 when the configured language model cannot be reached, and with 400 when
   * the bank's memory defense blocked every item.
   */
  readonly retainNow: (
    bankId: string,
    request: RetainRequest
  ) => Effect.Effect<RetainOutcome, ServiceUnavailable | ValidationError>
  /**
   * Queues the items as a `batch_retain` operation and returns it; they are screened by the bank's memory defense
   * first, so no secret it redacts or blocks is ever stored, not even in the operation's payload.
   */
  readonly retainLater: (
    bankId: string,
    request: RetainRequest
  ) => Effect.Effect<{ readonly operationId: string }, ValidationError>
  /** Stores items on behalf of a background operation (its id makes a re-run write the same chunks). */
  readonly retainForOperation: (
    bankId: string,
    items: ReadonlyArray<MemoryItem>,
    operationId: string,
    /** `reextract`: a replaced document's unchanged chunks are extracted again instead of keeping their memories. */
    options?: { readonly reextract?: boolean }
  ) => Effect.Effect<RetainOutcome, TaskFailure>
}>()("engram/memory/Retain") {
  static readonly layer = Layer.effect(
    Retain,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const llm = yield* Llm
      const embeddings = yield* Embeddings
      const operations = yield* Operations
      const config = yield* EngramConfig
      const registry = yield* TaskRegistry
      const statistics = yield* TableStatistics
      const graph = yield* GraphRecall
      const brains = yield* BankBrains
      const events = yield* BankEvents
      const consolidation = yield* makeConsolidationRequests
      const expiries = yield* ExpiryWakeups
      const removal = yield* makeMemoryRemoval

      /**
       * A retain's transaction under the bank's write lock: its documents, memories, entities and links, the anomalies
       * they cause, and the consolidation run that will take them.
       */
      const transaction = (
        { batch, consolidates }: RetainWrite,
        replacing: { readonly remove?: RemoveReplaced; readonly replacedChunks: boolean } = { replacedChunks: false }
      ) =>
        locks.withWriteLock(batch.bankId)(
          // The brain's vectors are lent under the lock; the writer uses them only when the brain stands where the
          // tables do (a write committed but not applied to it yet sends the search to SQL).
          Effect.suspend(() =>
            writeBatch(
              batch,
              replacing.remove,
              brains.heldVectors(batch.bankId, batch.embeddingModel, batch.dimensions)
            )
          ).pipe(
            // Anomalies are judged in the same transaction, after the links: a fact and the correction it causes
            // (an older fact superseded) are stored together or not at all.
            Effect.tap((written) =>
              config.anomalyDetection && written.created.length > 0
                ? detectWriteTimeAnomalies({
                  bankId: batch.bankId,
                  unitIds: written.created,
                  embeddingModel: batch.embeddingModel,
                  dimensions: batch.dimensions,
                  causalLinks: written.causalLinks
                })
                : Effect.void
            ),
            // New or replaced facts wait for consolidation into observations; one queued run serves many retains.
            // Queued in the same transaction, so facts are never stored without the run that will consolidate them.
            Effect.tap((written) =>
              consolidates && (written.created.length > 0 || replacing.replacedChunks)
                ? consolidation.enqueue(batch.bankId, consolidateTask, "retain")
                : Effect.void
            ),
            // The last statement: what the commit adds to the bank's brain, read while the transaction holds the
            // session (on PGlite a read after the commit waited its turn behind every other bank's statements).
            Effect.flatMap((written) =>
              Effect.map(
                changesBrain(batch, written) ? graph.deltaOfWrite(batch.bankId) : Effect.succeed(undefined),
                (delta) => ({ written, delta })
              )
            ),
            sql.withTransaction,
            Effect.orDie,
            Effect.provideService(SqlClient.SqlClient, sql)
          )
        ).pipe(
          // The bank's brain applies what was added (and, for a replaced document, removed) before the retain is
          // acknowledged, once for a whole group: recalls then never wait for a retain's catch-up. With the delta
          // read above it reads nothing (unless the brain moved meanwhile).
          Effect.flatMap(({ written, delta }): Effect.Effect<WriteResult> =>
            changesBrain(batch, written)
              ? Effect.as(graph.applyWrite(batch.bankId, delta), written)
              : Effect.succeed(written)
          )
        )
      // Plain retains that arrive while the bank's writer is busy share its next transaction (`GroupCommit`).
      const grouped = yield* makeGroupCommit((write) => transaction(write))

      // Retain's stages are spans of their own (extract per chunk, embed, write), each carrying counts only:
      // never the text, which may hold anything a user stored.
      const extract = (input: ExtractionInput, bankId: string, operationId: string | null) =>
        Effect.suspend((): Effect.Effect<
          { readonly facts: ReadonlyArray<ExtractedFact>; readonly usage: LlmUsage },
          LlmError
        > =>
          llm.available("retain")
            ? extractWithLlm(input, { bankId, operationId: operationId ?? undefined }).pipe(
              Effect.provideService(Llm, llm)
            )
            : runSliced(extractingOffline(input), Effect.yieldNow).pipe(
              Effect.map((facts) => ({ facts, usage: zeroUsage }))
            )
        ).pipe(
          Effect.tap((extraction) => Effect.annotateCurrentSpan("engram.retain.facts", extraction.facts.length)),
          Effect.withSpan("Retain.extract", {
            attributes: { "engram.retain.extractor": llm.available("retain") ? "llm" : "offline" }
          })
        )

      /** The items the bank's memory defense lets through (redacted), or a 400 when it blocked every one. */
      const defended = (bank: Bank, items: ReadonlyArray<MemoryItem>) => {
        const outcome = screenItems(bank.pipelineSettings.memoryDefense ?? null, items)
        return outcome.items.length === 0 && outcome.blocked > 0
          ? Effect.fail(ValidationError.single(
            "items",
            `every item was blocked by the bank's memory defense (sensitive data found: ${
              outcome.found.join(", ")
            }); nothing was stored`
          ))
          : Effect.succeed(outcome.items)
      }

      const process = Effect.fn("Retain.process")(function*(
        bank: Bank,
        received: ReadonlyArray<MemoryItem>,
        options: {
          readonly operationId: string | null
          readonly documentTags: ReadonlyArray<string>
          readonly itemOffset: number
          readonly reextract?: boolean
        }
      ) {
        // Screened again here (the policy may have changed since the items were queued): nothing unscreened is stored.
        const items = screenItems(bank.pipelineSettings.memoryDefense ?? null, received).items
        yield* Effect.annotateCurrentSpan("engram.retain.items", items.length)
        const now = new Date(yield* Clock.currentTimeMillis)
        const bankId = bank.bankId
        const chunkSize = bank.retainChunkSize ?? config.defaultChunkSize
        const runKey = options.operationId ?? crypto.randomUUID()

        // The first item naming a document replaces it (unless it asks to append); later items append.
        const replacing = new Set<string>()
        const documents = new Map<string, PreparedDocument & { texts: Array<string>; keptChunkIds: Array<string> }>()
        for (const item of items) {
          const documentId = item.document_id ?? null
          if (documentId === null || documents.has(documentId)) continue
          const replace = (item.update_mode ?? "replace") === "replace"
          if (replace) replacing.add(documentId)
          documents.set(documentId, {
            documentId,
            replace,
            metadata: item.metadata ?? {},
            tags: [...new Set([...(item.tags ?? []), ...options.documentTags])],
            context: item.context ?? null,
            originalText: "",
            keptChunkIds: [],
            texts: []
          })
        }
        const oldChunks = replacing.size === 0 ?
          [] :
          yield* sql<{ id: string; documentId: string; contentHash: string }>`
          SELECT id, document_id, content_hash FROM chunks
          WHERE bank_id = ${bankId} AND document_id IN ${sql.in([...replacing])}`.pipe(Effect.orDie)
        const reusable = new Map(
          options.reextract === true
            ? []
            : oldChunks.map((chunk) => [`${chunk.documentId}\u0000${chunk.contentHash}`, chunk.id])
        )

        const chunks: Array<PreparedChunk> = []
        const facts: Array<PreparedFact> = []
        let usage = zeroUsage
        const chunkCounter = new Map<string, number>()
        // The offline extractor is synchronous, a few milliseconds a chunk: a batch of 100 held the event loop for about
        // 300 ms, and with PGlite on its worker every statement of another bank's transaction waited that long for its
        // reply to be read. A turn of the event loop every few milliseconds of extraction.
        let sliceStart = performance.now()
        for (const [position, item] of items.entries()) {
          if (performance.now() - sliceStart > 2) {
            yield* Effect.yieldNow
            sliceStart = performance.now()
          }
          const itemIndex = options.itemOffset + position
          const documentId = item.document_id ?? null
          const document = documentId === null ? undefined : documents.get(documentId)
          document?.texts.push(item.content)
          const mentionedAt = resolveTimestamp(item.timestamp, now)
          const tags = [...new Set([...(item.tags ?? []), ...options.documentTags])]
          for (const text of chunkText(item.content, chunkSize)) {
            const counterKey = documentId ?? `item-${itemIndex}`
            const chunkIndex = chunkCounter.get(counterKey) ?? 0
            chunkCounter.set(counterKey, chunkIndex + 1)
            const hash = chunkHash(text)
            const kept = documentId === null ? undefined : reusable.get(`${documentId}\u0000${hash}`)
            if (kept !== undefined && document !== undefined) {
              document.keptChunkIds.push(kept)
              continue
            }
            const chunkId = stableId(bankId, documentId ?? runKey, itemIndex, chunkIndex, hash)
            chunks.push({ id: chunkId, documentId, chunkIndex, text, hash })
            const extraction = yield* extract(
              {
                text,
                context: item.context ?? null,
                mentionedAt,
                mode: bank.retainExtractionMode ?? "concise",
                mission: bank.retainMission,
                customInstructions: bank.retainCustomInstructions
              },
              bankId,
              options.operationId
            )
            usage = addUsage(usage, extraction.usage)
            const ids = extraction.facts.map(() => crypto.randomUUID())
            extraction.facts.forEach((fact: ExtractedFact, factIndex) => {
              facts.push({
                id: ids[factIndex]!,
                text: fact.text,
                factType: fact.factType,
                occurredStart: fact.occurredStart,
                occurredEnd: fact.occurredEnd,
                mentionedAt,
                context: item.context ?? null,
                documentId,
                chunkId,
                metadata: item.metadata ?? {},
                tags,
                observationScopes: item.observation_scopes ?? null,
                contentHash: contentHash(fact.text),
                embedding: new Float32Array(0),
                entities: [
                  ...fact.entities,
                  ...(item.entities ?? []).map((entity) => ({ name: entity.text, type: entity.type ?? null }))
                ],
                causes: fact.causes.map((cause) => ({ targetId: ids[cause.target]!, relation: cause.relation })),
                itemIndex,
                factIndex,
                expiresAt: item.expires_at == null ? null : new Date(item.expires_at)
              })
            })
          }
        }
        const vectors = yield* embeddings.embedDocuments(facts.map((fact) => fact.text)).pipe(
          Effect.withSpan("Retain.embed", { attributes: { "engram.retain.facts": facts.length } })
        )
        const embedded = facts.map((fact, index) => ({ ...fact, embedding: vectors[index]! }))
        const consolidates = autoConsolidates(bank, config.enableObservations)
        // A replaced document's old memories go with everything derived from them, as a delete takes them; the reads'
        // buffered access events are written first so that the removal takes theirs too.
        const replaced = removal.session(bankId, "replace")
        if (replacing.size > 0) yield* removal.flush(bankId)
        const batch: WriteBatch = {
          bankId,
          operationId: options.operationId,
          embeddingModel: modelKey(embeddings.identity),
          dimensions: embeddings.identity.dimensions,
          documents: [...documents.values()].map(({ texts, ...document }) => ({
            ...document,
            originalText: texts.join("\n\n")
          })),
          chunks,
          facts: embedded
        }
        // A retain inside a caller's transaction stays in it: the group's writer runs elsewhere, on its own connection.
        const inCallersTransaction = Option.isSome(yield* Effect.serviceOption(sql.transactionService))
        const grouping = !inCallersTransaction && groupable(batch) && oldChunks.length === 0
        const written = grouping
          ? grouped({ batch, consolidates })
          : transaction({ batch, consolidates }, { remove: replaced.remove, replacedChunks: oldChunks.length > 0 })
        // A grouped retain is committed by the bank's writer, not by this fiber: once it waits for that, it sees the
        // commit through (the brain's delta, the event) even if its client leaves, as the group's other requests do.
        const committed = Effect.gen(function*() {
          const result = yield* written.pipe(
            Effect.tap((written) =>
              Effect.annotateCurrentSpan({
                "engram.retain.created": written.created.length,
                "engram.retain.duplicates": written.duplicates
              })
            ),
            Effect.withSpan("Retain.write", { attributes: { "engram.retain.chunks": chunks.length } })
          )
          yield* statistics.noteWrites(result.created.length)
          yield* replaced.afterCommit
          // The expiry scheduler sleeps until the earliest expiry it knew of: this one may be earlier.
          if (result.created.length > 0 && items.some((item) => item.expires_at != null)) yield* expiries.notify
          // Emitted before a background retain settles, so a crash re-runs it and re-emits the same event id.
          yield* events.emit(
            bankId,
            "retain.completed",
            {
              operation_id: options.operationId,
              status: "completed",
              items_count: items.length,
              memories_created: result.created.length,
              duplicates_skipped: result.duplicates,
              document_ids: [...documents.keys()],
              tags: [...new Set(items.flatMap((item) => [...(item.tags ?? []), ...options.documentTags]))]
            },
            options.operationId === null ? undefined : stableId(bankId, "retain.completed", options.operationId),
            bank
          )
          if (consolidates && (result.created.length > 0 || oldChunks.length > 0)) yield* consolidation.wake(bankId)
          return { created: result.created.length, duplicates: result.duplicates, usage }
        })
        return yield* grouping ? Effect.uninterruptible(committed) : committed
      })

      const toUnavailable = (error: LlmError | EmbeddingError) =>
        new ServiceUnavailable({
          detail: error instanceof LlmError
            ? `the language model failed during retain: ${error.message}`
            : `embedding failed during retain: ${error.message}`
        })

      /**
       * An item that would be stored already expired is refused, before anything (the bank included) is created: it
       * could never be read, so it is almost certainly a mistake (seconds taken for milliseconds, a past year).
       */
      const expiriesAhead = Effect.fn("Retain.expiriesAhead")(function*(items: ReadonlyArray<MemoryItem>) {
        const now = yield* Clock.currentTimeMillis
        const index = items.findIndex((item) => item.expires_at != null && Date.parse(item.expires_at) <= now)
        if (index >= 0) {
          return yield* ValidationError.single(
            `items.${index}.expires_at`,
            "must be in the future (the memory would never be readable)"
          )
        }
      })

      /** A queued retain whose items name no document (only those are grouped; see `GroupCommit`). */
      const writesNoDocument = (operation: OperationRecord) =>
        operation.documentId === null &&
        Option.exists(
          decodePayloadOption(operation.payload),
          (payload) => payload.items.every((item) => item.document_id == null)
        )

      const retainNow = Effect.fn("Retain.retainNow")(function*(bankId: string, request: RetainRequest) {
        yield* expiriesAhead(request.items)
        const bank = yield* banks.ensure(bankId)
        const items = yield* defended(bank, request.items)
        return yield* process(bank, items, {
          operationId: null,
          documentTags: request.document_tags ?? [],
          itemOffset: 0
        }).pipe(Effect.mapError(toUnavailable))
      })

      const retainLater = Effect.fn("Retain.retainLater")(function*(bankId: string, received: RetainRequest) {
        yield* expiriesAhead(received.items)
        const bank = yield* banks.ensure(bankId)
        const request = { ...received, items: yield* defended(bank, received.items) }
        const documentIds = new Set(request.items.map((item) => item.document_id ?? null))
        const documentId = documentIds.size === 1 ? [...documentIds][0] ?? null : null
        const tags = request.document_tags ?? null
        const children = request.items.length <= subBatchSize ? undefined : Array.from(
          { length: Math.ceil(request.items.length / subBatchSize) },
          (_, index) => {
            const items = request.items.slice(index * subBatchSize, (index + 1) * subBatchSize)
            return {
              payload: { items, document_tags: tags, item_offset: index * subBatchSize },
              itemsCount: items.length
            }
          }
        )
        const operation = yield* operations.submit({
          bankId,
          taskType: "batch_retain",
          payload: children === undefined ? { items: request.items, document_tags: tags } : { split: true },
          itemsCount: request.items.length,
          documentId,
          ...(children === undefined ? {} : { children })
        })
        return { operationId: operation.id }
      })

      yield* registry.register("batch_retain", (operation) =>
        Effect.gen(function*() {
          const payload = yield* decodePayload(operation.payload).pipe(
            Effect.mapError(() =>
              new TaskFailure({ message: "the stored retain payload is invalid", retryable: false })
            )
          )
          const bank = yield* banks.get(operation.bankId).pipe(
            Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
          )
          const outcome = yield* process(bank, payload.items, {
            operationId: operation.id,
            documentTags: payload.document_tags ?? [],
            itemOffset: payload.item_offset ?? 0
          }).pipe(
            Effect.mapError((error) =>
              new TaskFailure({
                message: toUnavailable(error).detail,
                retryable: error.retryable
              })
            )
          )
          return {
            memories_created: outcome.created,
            duplicates_skipped: outcome.duplicates,
            usage: {
              input_tokens: outcome.usage.inputTokens,
              output_tokens: outcome.usage.outputTokens,
              total_tokens: outcome.usage.totalTokens
            }
          }
        }), {
        // Retains queued one behind another run together, and their writes share transactions (GroupCommit). With
        // a language model extracting, each one running is a model call in flight: a few, not fifty, per bank.
        runsTogether: {
          admits: writesNoDocument,
          operations: llm.available("retain") ? llmRetainsTogether : 50,
          items: groupFacts
        }
      })

      const retainForOperation = Effect.fn("Retain.retainForOperation")(function*(
        bankId: string,
        items: ReadonlyArray<MemoryItem>,
        operationId: string,
        reprocessing?: { readonly reextract?: boolean }
      ) {
        const bank = yield* banks.get(bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
        )
        return yield* process(bank, items, {
          operationId,
          documentTags: [],
          itemOffset: 0,
          reextract: reprocessing?.reextract === true
        }).pipe(
          Effect.mapError((error) =>
            new TaskFailure({ message: toUnavailable(error).detail, retryable: error.retryable })
          )
        )
      })

      return Retain.of({ retainNow, retainLater, retainForOperation })
    })
  )
}
