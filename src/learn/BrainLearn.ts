/**
 * Learning from another engram instance as a durable `brain_learn` operation: probe the remote's `/version`, read
 * its `.brain` export when it offers one (parsed and checked like an import), otherwise its memories, mental models
 * and entities over REST; then store the remote memories here — re-embedded with this bank's model, tagged with
 * their source, deduplicated against what the bank holds (same content or a near duplicate) — and queue
 * consolidation. The remote's activity model (the file's `activity` section, else its `GET …/sub-routine/histogram`)
 * is merged into this bank's as that source's learned counts (ActivityExchange: replaced per source, capped 1:1
 * against the bank's own events); a raw mirror takes memories only. The remote key lives only in this process's
 * memory until the learn ends — done, failed for good, interrupted or cancelled: the stored payload says whether
 * there was one, never what it was, and no error or log line carries it.
 */
import { Clock, Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { BankActors } from "../bank/BankActors.ts"
import { BankBrains } from "../brain/BankBrains.ts"
import { BankLocks } from "../bank/BankLocks.ts"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { BrainLearnRequest } from "../domain/Brain.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { consolidateTask, makeConsolidationRequests } from "../memory/consolidation/ConsolidationRequests.ts"
import { modelKey } from "../memory/Reembedding.ts"
import { contentHash } from "../memory/retain/ContentHash.ts"
import { type PreparedFact, writeBatch } from "../memory/retain/MemoryWriter.ts"
import { MentalModels } from "../mentalmodels/MentalModels.ts"
import { Embeddings } from "../models/Embeddings.ts"
import type { OperationRecord } from "../bank/OperationStore.ts"
import { OperationStore } from "../bank/OperationStore.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { ActivityExchangeError, countsFromHistogram, decodeActivitySection } from "../activity/ActivityExchange.ts"
import { ActivityModels, type LearnedMerge } from "../activity/ActivityModels.ts"
import { BrainRuntime } from "../brain/BrainRuntime.ts"
import { tierBudgets } from "../brain/BrainSettings.ts"
import type { BrainMemory, BrainMentalModel } from "../brain/file/BrainFile.ts"
import { type RemoteEngram, remoteEngram, RemoteError, remoteRefusal } from "./RemoteEngram.ts"

export const brainLearnTask = "brain_learn"

interface LearnPayload {
  readonly remote_endpoint: string
  readonly remote_bank_id: string
  readonly learning_type: "auto" | "distilled" | "structured" | "raw_mirror"
  readonly mode: "incremental" | "full_copy"
  readonly horizon_hours: number
  readonly has_remote_api_key: boolean
  readonly dedupe_key: string
}

/** Memories stored per transaction: the bank's write lock is held for one batch at a time. */
const storeBatch = 50
const pageSize = 100
const maxPages = 200

export class BrainLearn extends Context.Service<BrainLearn, {
  readonly submit: (
    bankId: string,
    request: BrainLearnRequest
  ) => Effect.Effect<{ readonly operation_id: string; readonly deduplicated: boolean }, NotFound | ValidationError>
  /** The remote key a queued learn was submitted with (this process only), and its release once the learn ran. */
  readonly remoteKey: (operationId: string) => Redacted.Redacted<string> | undefined
  readonly forgetKey: (operationId: string) => void
}>()("engram/brain/BrainLearn") {
  static readonly layer = Layer.effect(
    BrainLearn,
    Effect.gen(function*() {
      const config = yield* EngramConfig
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const store = yield* OperationStore
      const actors = yield* BankActors
      const settings = config.brain
      // Keys by operation id, for the operation's life in this process only (see the file's comment).
      const keys = new Map<string, Redacted.Redacted<string>>()

      const submit = Effect.fn("BrainLearn.submit")(function*(bankId: string, request: BrainLearnRequest) {
        yield* banks.get(bankId)
        const endpoint = request.remote_endpoint.trim()
        const refused = yield* remoteRefusal(endpoint, settings.learnAllowPrivateNetworks)
        if (refused !== undefined) return yield* ValidationError.single("remote_endpoint", refused)
        const learningType = request.learning_type ?? "auto"
        const mode = request.mode ?? "incremental"
        const horizon = request.horizon_hours ?? 24
        const key = request.remote_api_key ?? ""
        // Whether a key came is part of the identity (a keyless learn must not stand in for one with a key); the key
        // itself never is, nor any digest of it: the payload is stored.
        const dedupeKey = `${bankId}:learn:${endpoint}:${request.remote_bank_id}:${learningType}:${mode}:${horizon}:` +
          (key === "" ? "no-key" : "key")
        // Waiting or already running: the same learn twice would fetch and store the same memories twice.
        const waiting = yield* sql<{ id: string }>`SELECT id FROM operations
          WHERE bank_id = ${bankId} AND task_type = ${brainLearnTask} AND status IN ('pending', 'running')
            AND parent_id IS NULL
            AND payload->>'dedupe_key' = ${dedupeKey}
          ORDER BY created_at LIMIT 1`.pipe(Effect.orDie)
        const found = waiting[0]
        if (found !== undefined) return { operation_id: found.id, deduplicated: true }
        const payload: LearnPayload = {
          remote_endpoint: endpoint,
          remote_bank_id: request.remote_bank_id,
          learning_type: learningType,
          mode,
          horizon_hours: horizon,
          has_remote_api_key: key !== "",
          dedupe_key: dedupeKey
        }
        const created = yield* store.create({ bankId, taskType: brainLearnTask, payload })
        if (key !== "") keys.set(created.id, Redacted.make(key))
        yield* actors.wake(bankId)
        return { operation_id: created.id, deduplicated: false }
      })

      return BrainLearn.of({
        submit,
        remoteKey: (operationId) => keys.get(operationId),
        forgetKey: (operationId) => void keys.delete(operationId)
      })
    })
  )
}

/** The `brain_learn` task: what a learn does once its operation runs. */
export const BrainLearnTask = TaskRegistry.handler(
  brainLearnTask,
  Effect.gen(function*() {
    const config = yield* EngramConfig
    const sql = yield* SqlClient.SqlClient
    const runtime = yield* BrainRuntime
    const embeddings = yield* Embeddings
    const locks = yield* BankLocks
    const brains = yield* BankBrains
    const mentalModels = yield* MentalModels
    const consolidation = yield* makeConsolidationRequests
    const learn = yield* BrainLearn
    const activityModels = yield* ActivityModels
    const settings = config.brain
    const budget = tierBudgets[settings.hardwareTier]
    const embeddingModel = modelKey(embeddings.identity)

    const fail = (message: string, retryable = false) => new TaskFailure({ message, retryable })

    /** Memories over REST, newest pages first as the remote lists them, up to the tier budget. */
    const restMemories = (remote: RemoteEngram, bankPath: string, errors: Array<string>) =>
      Effect.gen(function*() {
        const memories: Array<BrainMemory> = []
        for (let page = 0; page < maxPages && memories.length < budget.memories; page++) {
          const path = `${bankPath}/memories/list?limit=${pageSize}&offset=${page * pageSize}`
          const { status, body } = yield* remote.getJson(path)
          if (status !== 200) {
            errors.push(`memories: status ${status}`)
            break
          }
          const items = (body as { items?: Array<Record<string, unknown>> } | null)?.items ?? []
          for (const item of items) {
            if (typeof item["id"] !== "string" || typeof item["text"] !== "string") continue
            memories.push({
              id: item["id"],
              text: item["text"],
              fact_type: typeof item["fact_type"] === "string" ? item["fact_type"] : "world",
              context: typeof item["context"] === "string" ? item["context"] : null,
              mentioned_at: typeof item["mentioned_at"] === "string" ? item["mentioned_at"] : null,
              occurred_start: typeof item["occurred_start"] === "string" ? item["occurred_start"] : null,
              created_at: typeof item["created_at"] === "string" ? item["created_at"] : null,
              tags: Array.isArray(item["tags"])
                ? item["tags"].filter((tag): tag is string => typeof tag === "string")
                : []
            })
          }
          if (items.length < pageSize) break
        }
        return memories.slice(0, budget.memories)
      })

    const restMentalModels = (remote: RemoteEngram, bankPath: string, errors: Array<string>) =>
      Effect.gen(function*() {
        const { status, body } = yield* remote.getJson(`${bankPath}/mental-models?limit=${budget.mentalModels}`)
        if (status !== 200) {
          errors.push(`mental_models: status ${status}`)
          return []
        }
        const items = (body as { items?: Array<Record<string, unknown>> } | null)?.items ?? []
        return items.flatMap((item): Array<BrainMentalModel> =>
          typeof item["name"] === "string" && typeof item["source_query"] === "string"
            ? [{
              id: String(item["id"] ?? ""),
              name: item["name"],
              source_query: item["source_query"],
              content: typeof item["content"] === "string" ? item["content"] : "",
              tags: []
            }]
            : []
        )
      })

    /** Stores the remote memories as this bank's, in batches under the write lock; duplicates are skipped. */
    const storeMemories = (
      bankId: string,
      operationId: string,
      source: string,
      remoteBank: string,
      memories: ReadonlyArray<BrainMemory>
    ) =>
      Effect.gen(function*() {
        let stored = 0
        let duplicates = 0
        let queued = false
        const learnable = memories.filter((memory) => memory.fact_type === "world" || memory.fact_type === "experience")
        for (let start = 0; start < learnable.length; start += storeBatch) {
          const batch = learnable.slice(start, start + storeBatch)
          const vectors = yield* embeddings.embedDocuments(batch.map((memory) => memory.text)).pipe(
            Effect.mapError((error) => fail(`embedding the learned memories failed: ${error.message}`, true))
          )
          const facts = batch.map((memory, index): PreparedFact => ({
            id: randomUUID(),
            text: memory.text,
            factType: memory.fact_type === "experience" ? "experience" : "world",
            occurredStart: dateOrNull(memory.occurred_start),
            occurredEnd: null,
            mentionedAt: dateOrNull(memory.mentioned_at),
            context: memory.context ?? `[learned from ${source}/${remoteBank}]`,
            documentId: null,
            chunkId: null,
            metadata: { learned_from: source, remote_bank_id: remoteBank, remote_memory_id: memory.id },
            tags: [...new Set(["brain-learn", `source:${remoteBank}`, ...memory.tags])],
            observationScopes: null,
            contentHash: contentHash(memory.text),
            embedding: vectors[index]!,
            entities: [],
            causes: [],
            itemIndex: start + index,
            factIndex: 0
          }))
          const written = yield* locks.withWriteLock(bankId)(
            writeBatch({
              bankId,
              operationId,
              embeddingModel,
              dimensions: embeddings.identity.dimensions,
              documents: [],
              chunks: [],
              facts
            }).pipe(
              // Queued with the facts it will consolidate; skipped by the bank's own setting like a retain's.
              Effect.tap((result) =>
                result.created.length > 0 ? consolidation.enqueue(bankId, consolidateTask, "retain") : Effect.void
              ),
              sql.withTransaction,
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.mapError((error) => fail(`storing the learned memories failed: ${error.message}`, true))
            )
          )
          stored += written.created.length
          duplicates += written.duplicates
          if (written.created.length > 0) {
            queued = true
            yield* brains.changed(bankId)
          }
        }
        if (queued) yield* consolidation.wake(bankId)
        return { stored, duplicates, consolidationQueued: queued, skippedTypes: memories.length - learnable.length }
      })

    const storeModels = (bankId: string, remoteBank: string, models: ReadonlyArray<BrainMentalModel>) =>
      Effect.gen(function*() {
        const existing = yield* mentalModels.list(bankId, { tags: [], tagsMatch: "any", limit: 1000, offset: 0 }).pipe(
          Effect.orElseSucceed(() => [])
        )
        const names = new Set(existing.map((model) => model.name))
        let stored = 0
        for (const model of models.slice(0, budget.mentalModels)) {
          const name = `${model.name} [learned]`.slice(0, 256)
          if (names.has(name)) continue
          names.add(name)
          const created = yield* mentalModels.create(bankId, {
            name,
            source_query: model.source_query,
            tags: ["brain-learn", `source:${remoteBank}`]
          }).pipe(Effect.option)
          if (Option.isSome(created)) stored++
        }
        return stored
      })

    /**
     * The remote's hour counts from its file's activity section when it had one, else from its histogram over REST,
     * merged as `source`'s learned activity; a failure is reported in `errors` and merges nothing.
     */
    const mergeActivity = (
      bankId: string,
      source: string,
      remote: RemoteEngram,
      bankPath: string,
      fromFile: Uint8Array | null,
      errors: Array<string>
    ) =>
      Effect.gen(function*() {
        let counts: Array<number>
        let via: "brain_file" | "rest_histogram"
        try {
          if (fromFile !== null) {
            counts = decodeActivitySection(fromFile)
            via = "brain_file"
          } else {
            // The memories are already stored: an unreachable histogram is reported, not a failed learn.
            const { status, body } = yield* remote.getJson(`${bankPath}/sub-routine/histogram`).pipe(
              Effect.catch((error) => Effect.succeed({ status: 0, body: error.message as unknown }))
            )
            if (status !== 200) {
              errors.push(status === 0 ? `activity: ${String(body)}` : `activity: status ${status}`)
              return { merged: false as const }
            }
            counts = countsFromHistogram(body)
            via = "rest_histogram"
          }
        } catch (error) {
          if (!(error instanceof ActivityExchangeError)) throw error
          errors.push(`activity: ${error.message}`)
          return { merged: false as const }
        }
        const events = counts.reduce((sum, n) => sum + n, 0)
        if (events === 0) return { merged: false as const, via, remote_events: 0 }
        const merged: LearnedMerge = yield* activityModels.mergeLearned(bankId, source, {
          counts,
          events,
          via,
          merged_at: new Date(yield* Clock.currentTimeMillis).toISOString()
        })
        return { merged: true as const, via, ...merged }
      })

    const run = (operation: OperationRecord) =>
      Effect.gen(function*() {
        const payload = operation.payload as LearnPayload
        const bankId = operation.bankId
        const refused = yield* remoteRefusal(payload.remote_endpoint, settings.learnAllowPrivateNetworks)
        if (refused !== undefined) return yield* fail(`remote_endpoint ${refused}`)
        const apiKey = learn.remoteKey(operation.id)
        if (payload.has_remote_api_key && apiKey === undefined) {
          return yield* fail(
            "the remote key is kept in this process's memory only until the learn ends (it ran, failed or was cancelled, " +
              "or the process restarted); submit the learn again with the key"
          )
        }
        const remote = yield* remoteEngram({
          endpoint: payload.remote_endpoint,
          apiKey,
          allowPrivateNetworks: settings.learnAllowPrivateNetworks
        })
        const source = new URL(payload.remote_endpoint).host
        const bankPath = `/v1/default/banks/${encodeURIComponent(payload.remote_bank_id)}`
        const errors: Array<string> = []
        const version = yield* remote.getJson("/version")
        if (version.status !== 200) {
          return yield* fail(`the remote answered /version with status ${version.status}`, version.status >= 500)
        }
        const features = (version.body as { features?: Record<string, unknown> } | null)?.features ?? {}
        const offersBrain = features["brain_import_export"] === true
        let effective: string = payload.learning_type
        let remoteBrainUsed = false
        let memories: ReadonlyArray<BrainMemory> = []
        let models: ReadonlyArray<BrainMentalModel> = []
        let entities = 0
        let remoteActivity: Uint8Array | null = null

        if ((payload.learning_type === "auto" || payload.learning_type === "distilled") && offersBrain) {
          const exported = yield* remote.getBytes(`${bankPath}/brain/export?mode=full_copy`, settings.maxFileBytes)
          if (exported.bytes !== null) {
            const content = yield* runtime.parse(exported.bytes).pipe(
              Effect.mapError((invalid) => fail(`the remote's .brain file is invalid: ${invalid.reason}`))
            )
            memories = content.memories
            models = content.mentalModels
            remoteActivity = content.activity
            remoteBrainUsed = true
            effective = "distilled"
          } else {
            errors.push(`brain_export: status ${exported.status}`)
          }
        }
        if (payload.learning_type === "distilled" && !remoteBrainUsed) {
          return yield* fail(
            `the remote offers no .brain export for bank '${payload.remote_bank_id}' (${
              errors.join("; ") || "brain_import_export is off"
            })`
          )
        }
        if (!remoteBrainUsed) {
          memories = yield* restMemories(remote, bankPath, errors)
          if (payload.learning_type !== "raw_mirror") {
            models = yield* restMentalModels(remote, bankPath, errors)
            const listed = yield* remote.getJson(`${bankPath}/entities?limit=200`)
            if (listed.status === 200) {
              entities = ((listed.body as { items?: Array<unknown> } | null)?.items ?? []).length
            } else errors.push(`entities: status ${listed.status}`)
          }
          effective = payload.learning_type === "raw_mirror" ? "raw_mirror" : "structured"
        }
        if (
          errors.some((error) => error.startsWith("memories:")) && memories.length === 0 && models.length === 0
        ) {
          return yield* fail(
            `nothing could be read from the remote bank '${payload.remote_bank_id}': ${errors.join("; ")}`
          )
        }

        // Incremental learning takes what the remote wrote within the horizon; full_copy takes everything offered.
        const now = yield* Clock.currentTimeMillis
        const since = now - payload.horizon_hours * 3_600_000
        const chosen = payload.mode === "full_copy"
          ? memories
          : memories.filter((memory) => {
            const time = Date.parse(memory.created_at ?? memory.mentioned_at ?? "")
            return Number.isNaN(time) || time >= since
          })
        const written = yield* storeMemories(bankId, operation.id, source, payload.remote_bank_id, chosen)
        const storedModels = payload.learning_type === "raw_mirror"
          ? 0
          : yield* storeModels(bankId, payload.remote_bank_id, models)
        const activity = payload.learning_type === "raw_mirror"
          ? { merged: false as const }
          : yield* mergeActivity(
            bankId,
            `${source}/${payload.remote_bank_id}`,
            remote,
            bankPath,
            remoteActivity,
            errors
          )
        return {
          remote_endpoint: payload.remote_endpoint,
          remote_bank_id: payload.remote_bank_id,
          learning_type_requested: payload.learning_type,
          learning_type_effective: effective,
          mode: payload.mode,
          horizon_hours: payload.horizon_hours,
          remote_brain_available: offersBrain,
          remote_brain_used: remoteBrainUsed,
          remote_memories: memories.length,
          remote_memories_in_horizon: chosen.length,
          remote_mental_models: models.length,
          remote_entities: entities,
          stored_memories: written.stored,
          skipped_duplicates: written.duplicates,
          skipped_derived: written.skippedTypes,
          stored_mental_models: storedModels,
          consolidation_queued: written.consolidationQueued,
          activity,
          errors
        }
      }).pipe(
        Effect.scoped,
        Effect.catch((error) =>
          error instanceof TaskFailure
            ? Effect.fail(error)
            : Effect.fail(
              error instanceof RemoteError
                ? fail(error.message, error.retryable)
                : fail("learning from the remote failed", true)
            )
        )
      )

    // The learn retries here, not in the bank actor, so that it knows when it has ended: then, whatever the outcome
    // (done, failed for good, interrupted), the remote key is forgotten. A failed learn retried later has no key and
    // says so; it never reuses a key it was not given again.
    return (operation: OperationRecord) =>
      run(operation).pipe(
        Effect.retry({
          schedule: Schedule.exponential(config.operationRetryBase),
          times: Math.max(0, config.operationMaxAttempts - 1),
          while: (error: TaskFailure) => error.retryable
        }),
        Effect.mapError((error) =>
          error.retryable ? new TaskFailure({ message: error.message, retryable: false }) : error
        ),
        Effect.ensuring(Effect.sync(() => learn.forgetKey(operation.id)))
      )
  })
)

/** A cancelled learn that never ran (or was stopped) forgets its key too. */
export const BrainLearnCancel = Layer.effectDiscard(Effect.gen(function*() {
  const registry = yield* TaskRegistry
  const learn = yield* BrainLearn
  yield* registry.onCancel(brainLearnTask, (operation) => Effect.sync(() => learn.forgetKey(operation.id)))
}))

const dateOrNull = (value: string | null | undefined) => {
  if (value === null || value === undefined) return null
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}
