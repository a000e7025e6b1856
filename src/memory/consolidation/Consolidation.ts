/**
 * Consolidation into observations: the `consolidate` and `regenerate_observations` task handlers and the API the
 * routes use. A run first drops observations whose facts were deleted, then takes the facts waiting for
 * consolidation in retain order, batch by batch: each scope of a batch is planned (language model, or the offline
 * consolidator when none is configured or its answer stays invalid), near-duplicates are merged, and the batch is
 * written in one transaction with its facts marked done. So a run is delta-aware and a crash loses at most the
 * batch in progress. It ends by stamping the bank and emitting `consolidation.completed`.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { BankLocks } from "../../bank/BankLocks.ts"
import { BankSettingsChanges } from "../../bank/BankSettingsChanges.ts"
import { Foreground } from "../../bank/Foreground.ts"
import { Banks } from "../../bank/Banks.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import type { Bank } from "../../domain/Bank.ts"
import type { MemoryHistoryResponse } from "../../domain/Consolidation.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import { BankEvents } from "../../events/BankEvents.ts"
import { Embeddings } from "../../models/Embeddings.ts"
import { Llm, type LlmUsage } from "../../models/Llm.ts"
import type { OperationRecord } from "../../bank/OperationStore.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import { modelKey } from "../Reembedding.ts"
import type { ConsolidationFact, ObservationDraft } from "./ConsolidationFact.ts"
import {
  autoConsolidates,
  consolidateTask,
  type ConsolidationRequest,
  type ConsolidationTrigger,
  isAutomatic,
  makeConsolidationRequests,
  observationsEnabled,
  regenerateTask
} from "./ConsolidationRequests.ts"
import { planWithLlm } from "./LlmConsolidator.ts"
import { memoryHistory } from "./ObservationHistory.ts"
import { mergeNearDuplicates } from "./ObservationMerge.ts"
import { pendingFacts, relatedObservations, type VectorSpace } from "./ObservationReads.ts"
import { resetBank, resetFactObservations } from "./ObservationResets.ts"
import { type Scope, scopeKey, scopesOf } from "./ObservationScopes.ts"
import { writeObservations, type WriteOutcome } from "./ObservationWriter.ts"
import { missionTerms, offlineMergedText, planOffline } from "./OfflineConsolidator.ts"

/** Facts per batch: one language-model call per scope of a batch; offline batches are cheap, so larger. */
export const batchSize = { llm: 20, offline: 200 }

const Payload = Schema.Struct({ trigger: Schema.optionalKey(Schema.String) })
const decodePayload = Schema.decodeUnknownOption(Payload)

export interface ConsolidationResult {
  readonly mode: "llm" | "offline"
  readonly trigger: string
  readonly facts_processed: number
  readonly observations_created: number
  readonly observations_updated: number
  readonly observations_merged: number
  readonly observations_removed: number
  readonly total_observations: number
  readonly skipped?: string
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number; readonly total_tokens: number }
}

export class Consolidation extends Context.Service<Consolidation, {
  /** Queues a consolidation of the bank (`POST {bank}/consolidate`). */
  readonly request: (bankId: string, trigger: ConsolidationTrigger) => Effect.Effect<ConsolidationRequest, NotFound>
  /** Queues a consolidation of every bank of the tenant schema this instance serves. */
  readonly requestSchema: (schema: string) => Effect.Effect<
    ReadonlyArray<ConsolidationRequest & { readonly bankId: string }>,
    NotFound
  >
  readonly history: (bankId: string, memoryId: string) => Effect.Effect<typeof MemoryHistoryResponse.Type, NotFound>
  /** Deletes the observations resting on a fact, requeues their facts and queues a consolidation. */
  readonly resetMemory: (bankId: string, memoryId: string) => Effect.Effect<
    { readonly deleted: number; readonly operationId: string },
    NotFound | ValidationError
  >
  /** Deletes every observation of the bank; its facts wait for the next consolidation. */
  readonly clearObservations: (bankId: string) => Effect.Effect<number, NotFound>
  /**
   * Puts back in line the work of a consolidation that failed (its retries exhausted) and that no later run
   * completed: a run of the same kind is queued (or the waiting one reused). Returns how many facts it will
   * consolidate, 0 when nothing had failed. Observations are kept.
   */
  readonly recover: (bankId: string) => Effect.Effect<{ readonly retriedCount: number }, NotFound>
}>()("engram/memory/consolidation/Consolidation") {
  static readonly layer = Layer.effect(
    Consolidation,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const foreground = yield* Foreground
      const llm = yield* Llm
      const embeddings = yield* Embeddings
      const graph = yield* GraphRecall
      const brains = yield* BankBrains
      const events = yield* BankEvents
      const registry = yield* TaskRegistry
      const config = yield* EngramConfig
      const requests = yield* makeConsolidationRequests
      // A change of the rules observations follow (mission, observations mission, disposition) regenerates them: queued
      // with the settings, the actor woken once both are visible. A new bank has nothing to regenerate.
      yield* (yield* BankSettingsChanges).react(({ bankId, before, after }) =>
        before === undefined
          ? Effect.succeed(Effect.void)
          : Effect.map(
            requests.enqueueAfterSettingsChange(bankId, before, after),
            (queued) => (queued ? requests.wake(bankId) : Effect.void)
          )
      )
      const space: VectorSpace = { model: modelKey(embeddings.identity), dimensions: embeddings.identity.dimensions }

      /** A write of the bank: under its write lock (retain's deduplication must see it) in one transaction. */
      const write = <A, E>(bankId: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
        locks.withWriteLock(bankId)(effect.pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql)))

      const embedFailure = (error: { readonly message: string; readonly retryable: boolean }) =>
        new TaskFailure({ message: `embedding observations failed: ${error.message}`, retryable: error.retryable })
      const embedOne = (text: string) =>
        embeddings.embedDocuments([text]).pipe(Effect.map((vectors) => vectors[0]!), Effect.mapError(embedFailure))

      const planScope = Effect.fnUntraced(function*(
        bank: Bank,
        operationId: string | null,
        scope: Scope,
        facts: ReadonlyArray<ConsolidationFact>,
        useLlm: boolean
      ) {
        const offline = planOffline({
          bankId: bank.bankId,
          scope,
          facts,
          missionTerms: missionTerms(bank.observationsMission)
        }).pipe(
          Effect.map((drafts) => ({ drafts, usage: null as LlmUsage | null })),
          Effect.catchTag("SqlError", Effect.die)
        )
        if (!useLlm) return yield* offline
        const observations = yield* relatedObservations({
          bankId: bank.bankId,
          scope,
          factIds: facts.map((fact) => fact.id),
          entityIds: [...new Set(facts.flatMap((fact) => fact.entities.map((entity) => entity.id)))],
          space,
          perFact: 3,
          limit: 20
        }).pipe(Effect.catchTag("SqlError", Effect.die))
        return yield* planWithLlm({
          bankId: bank.bankId,
          operationId,
          scope,
          facts,
          observations,
          guidance: {
            observationsMission: bank.observationsMission,
            mission: bank.reflectMission,
            disposition: bank.disposition
          }
        }).pipe(
          Effect.map((planned) => ({ drafts: planned.drafts, usage: planned.usage as LlmUsage | null })),
          // A model that keeps answering out of format must not stall the bank: this batch goes offline.
          Effect.catchTag("LlmError", (error) =>
            error.reason === "invalid_output"
              ? offline
              : Effect.fail(
                new TaskFailure({
                  message: `the language model failed during consolidation: ${error.message}`,
                  retryable: error.retryable
                })
              ))
        )
      })

      const run = Effect.fn("Consolidation.run")(function*(operation: OperationRecord, mode: "delta" | "regenerate") {
        const bankId = operation.bankId
        const trigger = Option.match(decodePayload(operation.payload), {
          onNone: () => "manual",
          onSome: (payload) => payload.trigger ?? "manual"
        })
        const bank = yield* banks.get(bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
        )
        const useLlm = llm.available("consolidation")
        const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 }
        const totals = { facts: 0, created: 0, updated: 0, merged: 0, removed: 0 }
        const result = (skipped?: string): ConsolidationResult => ({
          mode: useLlm ? "llm" : "offline",
          trigger,
          facts_processed: totals.facts,
          observations_created: totals.created,
          observations_updated: totals.updated,
          observations_merged: totals.merged,
          observations_removed: totals.removed,
          total_observations: 0,
          ...(skipped === undefined ? {} : { skipped }),
          usage
        })
        // Turning observations off stops the automatic runs already queued; asking explicitly still works.
        if (isAutomatic(trigger) && !observationsEnabled(bank, config.enableObservations)) {
          return result("observations are disabled for this bank")
        }
        if (isAutomatic(trigger) && !autoConsolidates(bank, config.enableObservations)) {
          return result("automatic consolidation is disabled for this bank (enable_auto_consolidation)")
        }

        if (mode === "regenerate") {
          totals.removed += yield* write(bankId, resetBank(bankId)).pipe(Effect.orDie)
          yield* graph.changed(bankId)
        }
        const seen = new Set<string>()
        while (true) {
          const batchStarted = yield* Clock.currentTimeMillis
          const facts = yield* pendingFacts(bankId, useLlm ? batchSize.llm : batchSize.offline).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.orDie
          )
          // Every batch marks its facts; seeing one again means the mark did not stick, and looping would not help.
          if (facts.length === 0 || facts.every((fact) => seen.has(fact.id))) break
          facts.forEach((fact) => seen.add(fact.id))
          const scopes = new Map<string, { scope: Scope; facts: Array<ConsolidationFact> }>()
          for (const fact of facts) {
            for (const scope of scopesOf(fact.tags, fact.observationScopes)) {
              const entry = scopes.get(scopeKey(scope)) ?? { scope, facts: [] }
              entry.facts.push(fact)
              scopes.set(scopeKey(scope), entry)
            }
          }
          const drafts: Array<ObservationDraft> = []
          for (const { scope, facts: inScope } of scopes.values()) {
            const planned = yield* planScope(bank, operation.id, scope, inScope, useLlm).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.provideService(Llm, llm)
            )
            drafts.push(...planned.drafts)
            if (planned.usage !== null) {
              usage.input_tokens += planned.usage.inputTokens
              usage.output_tokens += planned.usage.outputTokens
              usage.total_tokens += planned.usage.totalTokens
            }
          }
          const vectors = drafts.length === 0
            ? []
            : yield* embeddings.embedDocuments(drafts.map((draft) => draft.text)).pipe(Effect.mapError(embedFailure))
          // A loaded brain holds the stored observations' vectors, current with the bank's writes (the last batch's
          // included: it was applied below before this one began). An unloaded one is not built for this.
          const brain = brains.isLoaded(bankId) ? Option.getOrUndefined(yield* brains.available(bankId)) : undefined
          const merged = yield* mergeNearDuplicates({
            bankId,
            space,
            records: brain?.records,
            drafts: drafts.map((draft, index) => ({ ...draft, embedding: vectors[index]! })),
            mergedText: useLlm ? (survivor) => Effect.succeed(survivor.text) : offlineMergedText(bankId),
            embed: embedOne
          }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.catchTag("SqlError", Effect.die))
          const { outcome, delta } = yield* write(
            bankId,
            Effect.gen(function*() {
              const outcome: WriteOutcome = yield* writeObservations({
                bankId,
                operationId: operation.id,
                space,
                drafts: merged,
                factIds: facts.map((fact) => fact.id)
              })
              // The batch's last statement: what it adds to the bank's brain, read while the transaction holds the
              // session, so applying it below needs no turn of its own at the database.
              return { outcome, delta: yield* graph.deltaOfWrite(bankId) }
            })
          ).pipe(Effect.orDie)
          // Each batch's observations reach recall's brain as soon as they are written, not at the end of the run:
          // the run waits for it, so that recalls meanwhile answer from the brain without waiting for it.
          yield* graph.applyWrite(bankId, delta)
          // A batch is a bounded slice: the next one waits for a lull between requests. Observations are the most
          // deferrable work there is (they catch up once requests pause), so under sustained load the wait is three
          // times the batch, at least the longest wait: consolidation takes at most a quarter of the time requests
          // want, whatever the bank's size.
          const batchMillis = (yield* Clock.currentTimeMillis) - batchStarted
          yield* foreground.yieldAtMost(Duration.millis(3 * batchMillis))
          totals.facts += facts.length
          totals.created += outcome.created
          totals.updated += outcome.updated
          totals.merged += outcome.merged
          totals.removed += outcome.removed
        }
        yield* sql`UPDATE banks SET last_consolidated_at = now() WHERE bank_id = ${bankId}`.pipe(Effect.orDie)
        const count = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type = 'observation'`.pipe(Effect.orDie)
        const done = { ...result(), total_observations: count[0]?.count ?? 0 }
        // Emitted before the task completes: a crash re-runs the task and re-emits, with the same event id.
        yield* events.emit(bankId, "consolidation.completed", {
          operation_id: operation.id,
          status: "completed",
          ...done
        }, `consolidation.completed:${operation.id}`)
        return done
      })

      yield* registry.register(consolidateTask, (operation) => run(operation, "delta"))
      yield* registry.register(regenerateTask, (operation) => run(operation, "regenerate"))

      const request = Effect.fn("Consolidation.request")(function*(bankId: string, trigger: ConsolidationTrigger) {
        yield* banks.get(bankId)
        return yield* requests.request(bankId, consolidateTask, trigger)
      })

      const requestSchema = Effect.fn("Consolidation.requestSchema")(function*(schema: string) {
        // One answer for every schema this instance does not serve, whether it exists or not: telling the two
        // apart would let a caller probe which other tenants exist (and it costs no catalog read either way).
        if (schema !== config.databaseSchema) {
          return yield* new NotFound({
            detail: `schema '${schema}' is not served by this instance`,
            resource: "schema",
            id: schema
          })
        }
        const all = yield* banks.list
        return yield* Effect.forEach(
          all,
          (bank) =>
            Effect.map(requests.request(bank.bankId, consolidateTask, "admin"), (queued) => ({
              ...queued,
              bankId: bank.bankId
            }))
        )
      })

      const resetMemory = Effect.fn("Consolidation.resetMemory")(function*(bankId: string, memoryId: string) {
        yield* banks.get(bankId)
        const units = yield* sql<{ factType: string }>`SELECT fact_type FROM memory_units
          WHERE bank_id = ${bankId} AND id = ${memoryId}`.pipe(Effect.orDie)
        const unit = units[0]
        if (unit === undefined) return yield* NotFound.of("memory", memoryId)
        if (unit.factType === "observation") {
          return yield* ValidationError.single(
            "memory_id",
            "is an observation; reset one of its source facts, or delete observations with DELETE {bank}/observations",
            "path"
          )
        }
        const deleted = yield* write(bankId, resetFactObservations(bankId, memoryId)).pipe(Effect.orDie)
        if (deleted > 0) yield* graph.changed(bankId)
        const queued = yield* requests.request(bankId, consolidateTask, "reset")
        return { deleted, operationId: queued.operationId }
      })

      const clearObservations = Effect.fn("Consolidation.clearObservations")(function*(bankId: string) {
        yield* banks.get(bankId)
        const deleted = yield* write(bankId, resetBank(bankId)).pipe(Effect.orDie)
        if (deleted > 0) yield* graph.changed(bankId)
        return deleted
      })

      const recover = Effect.fn("Consolidation.recover")(function*(bankId: string) {
        yield* banks.get(bankId)
        const tasks = [consolidateTask, regenerateTask]
        const failed = yield* sql<{ taskType: string }>`
          SELECT f.task_type FROM operations f
          WHERE f.bank_id = ${bankId} AND f.parent_id IS NULL AND f.status = 'failed' AND f.task_type IN ${
          sql.in(tasks)
        }
            AND NOT EXISTS (SELECT 1 FROM operations c
              WHERE c.bank_id = f.bank_id AND c.parent_id IS NULL AND c.task_type IN ${sql.in(tasks)}
                AND c.status = 'completed' AND c.created_at > f.created_at)
          ORDER BY f.created_at DESC LIMIT 1`.pipe(Effect.orDie)
        const last = failed[0]
        if (last === undefined) return { retriedCount: 0 }
        // A failed regeneration had reset every observation; a failed delta run left its facts unconsolidated.
        const task = last.taskType === regenerateTask ? regenerateTask : consolidateTask
        const facts = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM memory_units
          WHERE bank_id = ${bankId} AND fact_type IN ('world', 'experience')
            AND (${task === regenerateTask} OR consolidated_at IS NULL)`.pipe(Effect.orDie)
        yield* requests.request(bankId, task, "manual")
        return { retriedCount: facts[0]?.count ?? 0 }
      })

      return Consolidation.of({
        recover,
        request,
        requestSchema,
        history: (bankId, memoryId) =>
          banks.get(bankId).pipe(
            Effect.andThen(memoryHistory(bankId, memoryId)),
            Effect.provideService(SqlClient.SqlClient, sql)
          ),
        resetMemory,
        clearObservations
      })
    })
  )
}
