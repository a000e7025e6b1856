/**
 * Entity trajectories: the `entity_trajectory_recompute` task, the read the route serves, the manual request, and
 * the automatic request after a retain when the bank turned trajectories on. A run recomputes the entities it
 * was asked about, or every stale one (see Observations.staleEntities), one entity at a time with a pause for
 * requests between them, so a large bank never holds the database for long.
 */
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../../bank/Banks.ts"
import { Foreground } from "../../bank/Foreground.ts"
import type { EntityTrajectoryResponse } from "../../domain/EntityState.ts"
import { effectiveEntitySettings, type EntitySettings } from "../../domain/EntitySettings.ts"
import { NotFound } from "../../domain/Errors.ts"
import { BankEvents } from "../../events/BankEvents.ts"
import { Embeddings } from "../../models/Embeddings.ts"
import { Llm, type LlmError } from "../../models/Llm.ts"
import type { OperationRecord } from "../../bank/OperationStore.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { expiredAmong } from "../../memory/forgetting/Expiry.ts"
import { modelKey } from "../../memory/Reembedding.ts"
import { changedFactsKey, makeEntityRequests, type QueuedRecompute, trajectoryTask } from "../EntityRequests.ts"
import { fingerprintOf, loadObservations, staleEntities, type VectorSpace } from "./Observations.ts"
import { offlineLabelling } from "./OfflineLabels.ts"
import { labellingPurpose, labelWithLlm, promptVersion } from "./StateVocabulary.ts"
import { buildTrajectory } from "./TrajectoryModel.ts"
import { findTrajectory, saveTrajectory } from "./TrajectoryStore.ts"

export const offlinePromptVersion = "offline-kmeans-v1"
/**
 * Entities one run takes at most, when it finds the stale ones or takes what removals queued; what is left gets its own
 * run, queued by this one, so a sweep of a large bank does not hand one run thousands of entities to compute in a row.
 */
const entitiesPerRun = 200

const Payload = Schema.Struct({
  entity_ids: Schema.optionalKey(Schema.Array(Schema.String)),
  dedupe_key: Schema.optionalKey(Schema.String)
})
const decodePayload = Schema.decodeUnknownOption(Payload)

type Outcome =
  | { readonly entity_id: string; readonly current_state: string; readonly facts: number }
  | { readonly entity_id: string; readonly skipped: string }

export class EntityTrajectories extends Context.Service<EntityTrajectories, {
  readonly get: (bankId: string, entityId: string) => Effect.Effect<EntityTrajectoryResponse, NotFound>
  readonly requestRecompute: (bankId: string, entityId: string) => Effect.Effect<QueuedRecompute, NotFound>
}>()("engram/entities/trajectory/EntityTrajectories") {
  static readonly layer = Layer.effect(
    EntityTrajectories,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const llm = yield* Llm
      const embeddings = yield* Embeddings
      const foreground = yield* Foreground
      const registry = yield* TaskRegistry
      const events = yield* BankEvents
      const requests = yield* makeEntityRequests
      const space: VectorSpace = { model: modelKey(embeddings.identity), dimensions: embeddings.identity.dimensions }
      const withSql = Effect.provideService(SqlClient.SqlClient, sql)

      const entityName = (bankId: string, entityId: string) =>
        sql<{ canonicalName: string }>`SELECT canonical_name FROM entities
          WHERE bank_id = ${bankId} AND id = ${entityId}`.pipe(
          Effect.orDie,
          Effect.map((rows) => Option.fromNullishOr(rows[0]?.canonicalName))
        )

      const llmFailure = (error: LlmError) =>
        new TaskFailure({
          message: `the language model failed while labelling states: ${error.message}`,
          retryable: error.retryable
        })

      const computeOne = Effect.fnUntraced(function*(
        operation: OperationRecord,
        entityId: string,
        settings: EntitySettings
      ) {
        const bankId = operation.bankId
        const name = yield* entityName(bankId, entityId)
        if (Option.isNone(name)) {
          return { entity_id: entityId, skipped: "the entity no longer exists" } satisfies Outcome
        }
        const minFacts = Math.min(settings.trajectoryMinFacts, settings.trajectoryMaxFacts)
        const observations = yield* loadObservations(bankId, entityId, space, settings.trajectoryMaxFacts).pipe(
          withSql,
          Effect.orDie
        )
        if (observations.length < minFacts) {
          return {
            entity_id: entityId,
            skipped: `the entity has ${observations.length} facts; a trajectory needs at least ${minFacts}`
          } satisfies Outcome
        }
        const fingerprint = yield* fingerprintOf(bankId, entityId, space).pipe(withSql, Effect.orDie)
        const offline = {
          labelling: offlineLabelling(observations, name.value),
          model: "offline",
          version: offlinePromptVersion
        }
        const labelled = llm.available(labellingPurpose)
          ? yield* labelWithLlm({
            bankId,
            operationId: operation.id,
            entityName: name.value,
            priorVocabulary: Option.match(yield* findTrajectory(bankId, entityId).pipe(withSql, Effect.orDie), {
              onNone: () => [],
              onSome: (previous) => previous.state_vocabulary
            }),
            facts: observations
          }).pipe(
            Effect.map(({ labelling }) => ({
              labelling,
              model: llm.describe(labellingPurpose),
              version: promptVersion
            })),
            // A model that keeps answering out of format must not leave the entity without a trajectory.
            Effect.catchTag(
              "LlmError",
              (error) => error.reason === "invalid_output" ? Effect.succeed(offline) : Effect.fail(llmFailure(error))
            ),
            Effect.provideService(Llm, llm)
          )
          : offline
        const trajectory = buildTrajectory({
          bankId,
          entityId,
          observations,
          labelling: labelled.labelling,
          alpha: settings.laplaceAlpha,
          horizon: settings.forecastHorizon,
          llmModel: labelled.model,
          promptVersion: labelled.version,
          fingerprint
        })
        yield* saveTrajectory(trajectory).pipe(withSql, Effect.orDie)
        return {
          entity_id: entityId,
          current_state: trajectory.current_state,
          facts: observations.length
        } satisfies Outcome
      })

      const run = Effect.fn("EntityTrajectories.run")(function*(operation: OperationRecord) {
        const bank = yield* banks.get(operation.bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
        )
        const settings = effectiveEntitySettings(bank.entitySettings)
        const payload = decodePayload(operation.payload)
        const asked = Option.flatMap(payload, (decoded) => Option.fromNullishOr(decoded.entity_ids))
        const fromRemovals = Option.exists(payload, (decoded) => decoded.dedupe_key === changedFactsKey)
        if (Option.isSome(asked) && fromRemovals && asked.value.length > entitiesPerRun) {
          // Queued (or joined to a waiting run) before this one computes: a crash here retries this run, which queues
          // the same rest again into the one waiting.
          yield* requests.request(bank.bankId, {
            taskType: trajectoryTask,
            dedupeKey: changedFactsKey,
            payload: { trigger: "continuation" },
            entityIds: asked.value.slice(entitiesPerRun)
          })
        }
        const entityIds = Option.isSome(asked)
          ? (fromRemovals ? asked.value.slice(0, entitiesPerRun) : asked.value)
          : yield* staleEntities(bank.bankId, space, settings.trajectoryMinFacts, entitiesPerRun).pipe(
            withSql,
            Effect.orDie
          )
        const outcomes: Array<Outcome> = []
        for (const entityId of entityIds) {
          outcomes.push(yield* computeOne(operation, entityId, settings))
          yield* foreground.yieldAtMost(Duration.millis(250))
        }
        // A run over stale entities that hit its cap leaves the rest to a follow-up run rather than holding the bank.
        if (Option.isNone(asked) && entityIds.length === entitiesPerRun) {
          yield* requests.request(bank.bankId, {
            taskType: trajectoryTask,
            dedupeKey: "stale",
            payload: { trigger: "continuation" }
          })
        }
        return {
          computed: outcomes.filter((outcome) => "current_state" in outcome).length,
          skipped: outcomes.filter((outcome) => "skipped" in outcome).length,
          entities: outcomes
        }
      })
      yield* registry.register(trajectoryTask, run)

      // After a retain into a bank with trajectories on, one waiting run recomputes whatever the retain made stale.
      yield* events.listen((event) =>
        event.type !== "retain.completed" || event.data["memories_created"] === 0
          ? Effect.void
          : Effect.gen(function*() {
            const bank = event.bank ?? (yield* banks.get(event.bankId))
            if (!effectiveEntitySettings(bank.entitySettings).enableEntityTrajectories) return
            yield* requests.request(event.bankId, {
              taskType: trajectoryTask,
              dedupeKey: "stale",
              payload: { trigger: "retain" }
            })
          }).pipe(Effect.catchCause((cause) => Effect.logWarning("queueing entity trajectories failed", cause)))
      )

      const get = Effect.fn("EntityTrajectories.get")(function*(bankId: string, entityId: string) {
        yield* banks.get(bankId)
        const name = yield* entityName(bankId, entityId)
        if (Option.isNone(name)) return yield* NotFound.of("entity", entityId)
        const found = yield* findTrajectory(bankId, entityId).pipe(withSql, Effect.orDie)
        if (Option.isSome(found)) {
          // A step whose memory has expired is not shown (its preview is the memory's text) until the sweep recomputes.
          const path = found.value.viterbi_path
          const expired = yield* expiredAmong(sql, path.map((step) => step.unit_id), new Date()).pipe(Effect.orDie)
          return expired.size === 0
            ? found.value
            : { ...found.value, viterbi_path: path.filter((step) => !expired.has(step.unit_id)) }
        }
        const settings = effectiveEntitySettings((yield* banks.get(bankId)).entitySettings)
        const facts = (yield* fingerprintOf(bankId, entityId, space).pipe(withSql, Effect.orDie)).factCount
        return yield* new NotFound({
          detail: facts < settings.trajectoryMinFacts
            ? `trajectory not computed for entity '${entityId}': it has ${facts} facts and a trajectory needs at least ` +
              `${settings.trajectoryMinFacts}`
            : `trajectory not computed for entity '${entityId}' yet; POST .../trajectory/recompute computes it`,
          resource: "trajectory",
          id: entityId
        })
      })

      const requestRecompute = Effect.fn("EntityTrajectories.requestRecompute")(
        function*(bankId: string, entityId: string) {
          yield* banks.get(bankId)
          const name = yield* entityName(bankId, entityId)
          if (Option.isNone(name)) return yield* NotFound.of("entity", entityId)
          return yield* requests.request(bankId, {
            taskType: trajectoryTask,
            dedupeKey: `entity:${entityId}`,
            payload: { trigger: "manual" },
            entityIds: [entityId]
          })
        }
      )

      return EntityTrajectories.of({ get, requestRecompute })
    })
  )
}
