/**
 * The sub-routine: a durable `sub_routine` operation that warms the bank's brain (its graph snapshot and keyword
 * index, through `BankBrains`) and brings its activity model up to date, then predicts the hours ahead. A request
 * reuses an identical one still waiting (same mode, horizon and rebuild flag). `force_rebuild` drops the brain and
 * builds it again, and recounts the activity model from the tables. With SERVICE_API_BRAIN_STARTUP_WARMUP every
 * bank gets a warm-up when the service starts, queued in the background so start-up does not wait for it.
 * Also serves the model's histogram and predictions.
 */
import { Clock, Context, Effect, Layer, Option, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../bank/BankActors.ts"
import { BankBrains } from "../brain/BankBrains.ts"
import { Banks } from "../bank/Banks.ts"
import { ClusterNode } from "../cluster/ClusterNode.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { NotFound } from "../domain/Errors.ts"
import type { SubRoutineMode } from "../domain/SubRoutine.ts"
import { subRoutineModes } from "../domain/SubRoutine.ts"
import type { OperationRecord } from "../bank/OperationStore.ts"
import { OperationStore } from "../bank/OperationStore.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { predict, round } from "./ActivityModel.ts"
import { ActivityModels, type ActivityView } from "./ActivityModels.ts"

export const subRoutineTask = "sub_routine"

export interface SubRoutineOptions {
  readonly mode: SubRoutineMode
  readonly horizonHours: number
  readonly forceRebuild: boolean
}

export interface QueuedSubRoutine {
  readonly operationId: string
  readonly deduplicated: boolean
  readonly status: string
}

const Payload = Schema.Struct({
  mode: Schema.Literals(subRoutineModes),
  horizon_hours: Schema.Int,
  force_rebuild: Schema.Boolean
})
const decodePayload = Schema.decodeUnknownEffect(Payload)

const modelFields = (view: ActivityView) => ({
  bank_id: view.bankId,
  sample_count: view.sampleCount,
  source_snapshot_id: view.sourceSnapshotId,
  model_signature: view.modelSignature,
  built_at: view.builtAt === null ? null : view.builtAt.toISOString()
})

export class SubRoutine extends Context.Service<SubRoutine, {
  readonly request: (bankId: string, options: SubRoutineOptions) => Effect.Effect<QueuedSubRoutine, NotFound>
  readonly histogram: (bankId: string) => Effect.Effect<{
    readonly bank_id: string
    readonly histogram: ReadonlyArray<{ readonly hour_utc: number; readonly score: number }>
    readonly sample_count: number
    readonly source_snapshot_id: string
    readonly model_signature: string
    readonly built_at: string | null
  }, NotFound>
  readonly predictions: (bankId: string, horizonHours: number) => Effect.Effect<{
    readonly bank_id: string
    readonly horizon_hours: number
    readonly predictions: ReadonlyArray<{ readonly hour_utc: number; readonly score: number; readonly at: string }>
    readonly sample_count: number
    readonly source_snapshot_id: string
    readonly model_signature: string
    readonly built_at: string | null
  }, NotFound>
}>()("engram/activity/SubRoutine") {
  static readonly layer = Layer.effect(
    SubRoutine,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* OperationStore
      const actors = yield* BankActors
      const brains = yield* BankBrains
      const banks = yield* Banks
      const activity = yield* ActivityModels
      const registry = yield* TaskRegistry
      const config = yield* EngramConfig
      const node = yield* ClusterNode
      // The look for a waiting twin and the insert run under one permit, so two requests at once queue one run.
      const queueing = Semaphore.makeUnsafe(1)

      const enqueue = (bankId: string, options: SubRoutineOptions) =>
        queueing.withPermit(Effect.gen(function*() {
          const dedupeKey = `${bankId}:${options.mode}:${options.horizonHours}:${options.forceRebuild ? 1 : 0}`
          // Only a waiting run is reused: a running one may already have read what this request is about.
          const waiting = yield* sql<{ id: string }>`SELECT id FROM operations
            WHERE bank_id = ${bankId} AND task_type = ${subRoutineTask} AND status = 'pending' AND parent_id IS NULL
              AND payload->>'dedupe_key' = ${dedupeKey}
            ORDER BY created_at LIMIT 1`.pipe(Effect.orDie)
          if (waiting[0] !== undefined) return { operationId: waiting[0].id, deduplicated: true, status: "pending" }
          const created = yield* store.create({
            bankId,
            taskType: subRoutineTask,
            payload: {
              mode: options.mode,
              horizon_hours: options.horizonHours,
              force_rebuild: options.forceRebuild,
              dedupe_key: dedupeKey
            }
          })
          return { operationId: created.id, deduplicated: false, status: created.status }
        }))

      const request = Effect.fn("SubRoutine.request")(function*(bankId: string, options: SubRoutineOptions) {
        yield* banks.get(bankId)
        const queued = yield* enqueue(bankId, options)
        yield* actors.wake(bankId)
        return queued satisfies QueuedSubRoutine
      })

      const run = Effect.fn("SubRoutine.run")(function*(operation: OperationRecord) {
        const bankId = operation.bankId
        const payload = yield* decodePayload(operation.payload).pipe(
          Effect.mapError(() =>
            new TaskFailure({ message: "the stored sub-routine request is invalid", retryable: false })
          )
        )
        yield* banks.get(bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: "the bank no longer exists", retryable: false }))
        )
        // A forced rebuild really starts from nothing: the brain is dropped, so `available` reads it whole again.
        if (payload.force_rebuild) yield* brains.rebuild(bankId)
        const started = yield* Clock.currentTimeMillis
        const brain = yield* brains.available(bankId).pipe(
          Effect.flatMap(Option.match({
            // Its breaker is open or the build failed: worth another try after the cool-down.
            onNone: () =>
              Effect.fail(new TaskFailure({ message: "the bank's brain could not be built now", retryable: true })),
            onSome: Effect.succeed
          }))
        )
        const brainMs = (yield* Clock.currentTimeMillis) - started
        const model = yield* activity.build(bankId, { rebuild: payload.force_rebuild })
        // Whoever forced a rebuild expects the brain's file to hold it, however small the bank (`brain/status`).
        if (payload.force_rebuild) yield* brains.keepFileNow(bankId)
        const now = new Date(yield* Clock.currentTimeMillis)
        return {
          bank_id: bankId,
          mode: payload.mode,
          horizon_hours: payload.horizon_hours,
          force_rebuild: payload.force_rebuild,
          brain: {
            rebuilt: payload.force_rebuild,
            build_ms: brainMs,
            nodes: brain.graph.liveNodeCount,
            delta_edges: brain.graph.deltaEdges,
            tombstones: brain.graph.tombstones
          },
          activity: {
            ...modelFields(model),
            rebuilt: model.rebuilt,
            new_events: model.newEvents,
            histogram: model.shares.map((share, hour) => ({ hour_utc: hour, score: round(share) }))
          },
          predictions: model.sampleCount === 0 ? [] : predict(model.shares, payload.horizon_hours, now)
        }
      })

      yield* registry.register(subRoutineTask, run)

      const histogram = Effect.fn("SubRoutine.histogram")(function*(bankId: string) {
        yield* banks.get(bankId)
        const view = yield* activity.current(bankId)
        return {
          ...modelFields(view),
          histogram: view.shares.map((share, hour) => ({ hour_utc: hour, score: round(share) }))
        }
      })

      const predictions = Effect.fn("SubRoutine.predictions")(function*(bankId: string, horizonHours: number) {
        yield* banks.get(bankId)
        const view = yield* activity.current(bankId)
        const now = new Date(yield* Clock.currentTimeMillis)
        return {
          ...modelFields(view),
          horizon_hours: horizonHours,
          predictions: view.sampleCount === 0 ? [] : predict(view.shares, horizonHours, now)
        }
      })

      // Start-up warm-up: queued from a background fiber, so the server listens without waiting for it. On a
      // cluster one runner queues it for every bank (a singleton; again should that runner die), and each bank's
      // owner runs it, instead of every node starting queuing one per bank.
      if (config.brain.enabled && config.brain.startupWarmup) {
        yield* node.singleton(
          "brain-startup-warmup",
          Effect.gen(function*() {
            const all = yield* banks.list
            for (const bank of all) {
              yield* enqueue(bank.bankId, { mode: "warmup", horizonHours: 24, forceRebuild: false }).pipe(
                Effect.andThen(actors.wake(bank.bankId))
              )
            }
            if (all.length > 0) yield* Effect.logInfo("queued a start-up brain warm-up", { banks: all.length })
          }).pipe(
            Effect.catchCause((cause) => Effect.logWarning("could not queue the start-up brain warm-up", cause))
          )
        )
      }

      return SubRoutine.of({ request, histogram, predictions })
    })
  )
}
