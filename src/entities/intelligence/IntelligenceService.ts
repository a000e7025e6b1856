/**
 * Entity intelligence: the bank-level map of who and what matters. The `entity_intelligence_recompute` task builds
 * the entity map (deterministic), then writes the document — with the language model (an edit of the previous
 * document when there is one, else a full one) or, offline, from the map alone — and stores it. Recomputed on
 * request, and after a retain when the bank turned it on and its entity set grew enough since the last document.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../../bank/Banks.ts"
import type { EntityIntelligenceResponse } from "../../domain/EntityState.ts"
import { effectiveEntitySettings } from "../../domain/EntitySettings.ts"
import { NotFound } from "../../domain/Errors.ts"
import { BankEvents } from "../../events/BankEvents.ts"
import { Llm, type LlmError } from "../../models/Llm.ts"
import type { OperationRecord } from "../../bank/OperationStore.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { intelligenceTask, makeEntityRequests, type QueuedRecompute } from "../EntityRequests.ts"
import { fitToBudget, loadEntityMap, snapshotHash } from "./EntityMap.ts"
import { offlineDocument, renderMarkdown, StructuredDocument } from "./IntelligenceDocument.ts"
import { applyDelta, intelligencePurpose, promptVersion, writeDelta, writeFull } from "./IntelligencePrompt.ts"
import { findIntelligence, saveIntelligence } from "./IntelligenceStore.ts"

export const offlinePromptVersion = "offline-entity-map-v1"
/** The reference system's trigger: at least this many entities, and this many more than the last document saw. */
export const triggerEntityDelta = 8
export const minEntities = 8
const maxContextTokens = 10000
const maxCompletionTokens = 4096

const decodeDocument = Schema.decodeUnknownOption(StructuredDocument)
const Payload = Schema.Struct({ trigger: Schema.optionalKey(Schema.String) })
const decodePayload = Schema.decodeUnknownOption(Payload)

export class EntityIntelligence extends Context.Service<EntityIntelligence, {
  readonly get: (bankId: string) => Effect.Effect<EntityIntelligenceResponse, NotFound>
  readonly requestRecompute: (bankId: string) => Effect.Effect<QueuedRecompute, NotFound>
}>()("engram/entities/intelligence/EntityIntelligence") {
  static readonly layer = Layer.effect(
    EntityIntelligence,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const llm = yield* Llm
      const registry = yield* TaskRegistry
      const events = yield* BankEvents
      const requests = yield* makeEntityRequests
      const withSql = Effect.provideService(SqlClient.SqlClient, sql)

      const llmFailure = (error: LlmError) =>
        new TaskFailure({
          message: `the language model failed while writing entity intelligence: ${error.message}`,
          retryable: error.retryable
        })

      const run = Effect.fn("EntityIntelligence.run")(function*(operation: OperationRecord) {
        const bankId = operation.bankId
        yield* banks.get(bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
        )
        const trigger = Option.match(decodePayload(operation.payload), {
          onNone: () => "manual",
          onSome: (p) => p.trigger ?? "manual"
        })
        const context = fitToBudget(
          yield* loadEntityMap(bankId).pipe(withSql, Effect.orDie),
          maxContextTokens,
          minEntities
        )
        const hash = snapshotHash(context)
        const previous = yield* findIntelligence(bankId).pipe(withSql, Effect.orDie)
        const useLlm = llm.available(intelligencePurpose)
        const model = useLlm ? llm.describe(intelligencePurpose) : "offline"
        // An automatic run over an unchanged bank would write the same document again; it stops here instead.
        if (
          trigger !== "manual" && Option.isSome(previous) && previous.value.entity_snapshot_hash === hash &&
          previous.value.llm_model === model
        ) {
          return { skipped: "the entity map has not changed since the last document", entity_snapshot_hash: hash }
        }
        const budget = { max_context_tokens: maxContextTokens, max_completion_tokens: maxCompletionTokens }
        const written = yield* Effect.gen(function*() {
          if (!useLlm) {
            return {
              document: offlineDocument(context),
              metadata: { mode: "offline", delta_attempted: false, ...budget }
            }
          }
          const before = Option.flatMap(
            previous,
            (row) => row.llm_model === "offline" ? Option.none() : decodeDocument(row.structured_content)
          )
          let deltaError: string | undefined
          if (Option.isSome(before)) {
            const delta = yield* writeDelta(bankId, operation.id, before.value, context).pipe(Effect.result)
            if (delta._tag === "Success") {
              const applied = applyDelta(before.value, delta.success.operations)
              return {
                document: applied.document,
                metadata: {
                  mode: "delta",
                  delta_attempted: true,
                  delta_succeeded: true,
                  applied: applied.applied,
                  ...(applied.skipped.length === 0 ? {} : { skipped: applied.skipped }),
                  previous_snapshot_hash: Option.getOrThrow(previous).entity_snapshot_hash,
                  ...budget
                }
              }
            }
            // A delta the model could not produce falls back to a full document; an outage is retried instead.
            if (delta.failure.reason !== "invalid_output") return yield* llmFailure(delta.failure)
            deltaError = delta.failure.message
          }
          const full = yield* writeFull(bankId, operation.id, context).pipe(
            Effect.map(({ document }) => ({ document, fallback: undefined as string | undefined })),
            Effect.catchTag("LlmError", (error) =>
              error.reason === "invalid_output"
                ? Effect.succeed({ document: offlineDocument(context), fallback: error.message })
                : Effect.fail(llmFailure(error)))
          )
          return {
            document: full.document,
            metadata: {
              mode: full.fallback === undefined ? "full" : "offline_fallback",
              delta_attempted: Option.isSome(before),
              ...(Option.isSome(before) ? { delta_succeeded: false, delta_error: deltaError } : {}),
              ...(full.fallback === undefined ? {} : { fallback_reason: full.fallback }),
              ...budget
            }
          }
        }).pipe(Effect.provideService(Llm, llm))
        const offline = written.metadata.mode === "offline" || written.metadata.mode === "offline_fallback"
        yield* saveIntelligence({
          bank_id: bankId,
          entity_count: context.included_entity_count,
          source_entity_count: context.source_entity_count,
          entity_snapshot_hash: hash,
          content: renderMarkdown(written.document),
          structured_content: written.document,
          entity_context: { ...context },
          delta_metadata: written.metadata,
          llm_model: model,
          prompt_version: offline ? offlinePromptVersion : promptVersion
        }).pipe(withSql, Effect.orDie)
        return { mode: written.metadata.mode, entity_count: context.included_entity_count, entity_snapshot_hash: hash }
      })
      yield* registry.register(intelligenceTask, run)

      /** §8's trigger: enough entities, enough new ones since the last document, and no run already queued. */
      const shouldRecompute = Effect.fnUntraced(function*(bankId: string) {
        const counted = yield* sql<
          { count: number }
        >`SELECT count(*)::int AS count FROM entities WHERE bank_id = ${bankId}`
        const count = counted[0]?.count ?? 0
        if (count < minEntities) return false
        const previous = yield* findIntelligence(bankId).pipe(withSql)
        if (Option.isSome(previous) && count - previous.value.source_entity_count < triggerEntityDelta) return false
        return !(yield* requests.inFlight(bankId, intelligenceTask))
      })

      yield* events.listen((event) =>
        event.type !== "retain.completed" || event.data["memories_created"] === 0
          ? Effect.void
          : Effect.gen(function*() {
            const bank = event.bank ?? (yield* banks.get(event.bankId))
            if (!effectiveEntitySettings(bank.entitySettings).enableEntityIntelligence) return
            if (!(yield* shouldRecompute(event.bankId))) return
            yield* requests.request(event.bankId, {
              taskType: intelligenceTask,
              dedupeKey: "bank",
              payload: { trigger: "retain" }
            })
          }).pipe(Effect.catchCause((cause) => Effect.logWarning("queueing entity intelligence failed", cause)))
      )

      const get = Effect.fn("EntityIntelligence.get")(function*(bankId: string) {
        yield* banks.get(bankId)
        const found = yield* findIntelligence(bankId).pipe(withSql, Effect.orDie)
        if (Option.isSome(found)) return found.value
        return yield* new NotFound({
          detail:
            `entity intelligence not computed for bank '${bankId}' yet; POST {bank}/entity-intelligence/recompute ` +
            "computes it",
          resource: "entity_intelligence",
          id: bankId
        })
      })

      const requestRecompute = Effect.fn("EntityIntelligence.requestRecompute")(function*(bankId: string) {
        yield* banks.get(bankId)
        return yield* requests.request(bankId, {
          taskType: intelligenceTask,
          dedupeKey: "bank",
          payload: { trigger: "manual" }
        })
      })

      return EntityIntelligence.of({ get, requestRecompute })
    })
  )
}
