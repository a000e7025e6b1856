/**
 * POST transform and POST generate: validate the request, answer inline for small batches, and queue larger
 * ones as durable operations (`taste_transform`, `taste_variant`) whose stage shows the progress. Ops that need
 * a language model are refused up front when none is configured; `raw` always works.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { GenerateRequest, GenerateResponse, TransformRequest, TransformResponse } from "../domain/Dataset.ts"
import { TransformOp } from "../domain/Dataset.ts"
import { type NotFound, ValidationError } from "../domain/Errors.ts"
import { Llm } from "../models/Llm.ts"
import { setOperationStage } from "../bank/OperationStage.ts"
import type { OperationRecord } from "../bank/OperationStore.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { Datasets } from "./Datasets.ts"
import { DatasetStore } from "./DatasetStore.ts"
import type { JsonObject } from "./Payloads.ts"
import { type ChainOp, type RunContext, runGenerate, runTransform } from "./TransformRuns.ts"
import { offlineMessage, requiresLlm, Tone } from "./TransformOps.ts"

/** Transforms of more sets than this run as a background operation (the reference service's threshold). */
export const syncTransformLimit = 3
/** Generations of more variants than this (seeds × count) run as a background operation. */
export const syncGenerateLimit = 12
export const defaultVariantCount = 8

export const transformTask = "taste_transform"
export const variantTask = "taste_variant"

const TransformPayload = Schema.Struct({
  dataset_id: Schema.String,
  set_ids: Schema.Array(Schema.String),
  ops: Schema.Array(TransformOp),
  preview: Schema.Boolean
})
const VariantPayload = Schema.Struct({
  dataset_id: Schema.String,
  set_ids: Schema.Array(Schema.String),
  count: Schema.Int,
  instruction: Schema.NullOr(Schema.String)
})

/** Each op's params, checked: `tone_shift` takes `tone`, the others take none. */
const checkOps = (ops: TransformRequest["ops"]): Effect.Effect<ReadonlyArray<ChainOp>, ValidationError> =>
  Effect.forEach(ops, (op, index) => {
    const params: JsonObject = op.params ?? {}
    const allowed = op.op === "tone_shift" ? ["tone"] : []
    const extra = Object.keys(params).find((key) => !allowed.includes(key))
    if (extra !== undefined) {
      return Effect.fail(
        ValidationError.single(
          `ops[${index}].params.${extra}`,
          `${op.op} takes ${allowed.length === 0 ? "no params" : "only tone"}`
        )
      )
    }
    if (
      op.op === "tone_shift" && params["tone"] !== undefined &&
      Option.isNone(Schema.decodeUnknownOption(Tone)(params["tone"]))
    ) {
      return Effect.fail(
        ValidationError.single(`ops[${index}].params.tone`, "must be one of concise, formal, friendly")
      )
    }
    return Effect.succeed({ op: op.op, params: op.op === "tone_shift" ? { tone: params["tone"] ?? "concise" } : {} })
  })

export class TasteTransforms extends Context.Service<TasteTransforms, {
  readonly transform: (
    bankId: string,
    request: TransformRequest
  ) => Effect.Effect<TransformResponse, NotFound | ValidationError>
  readonly generate: (
    bankId: string,
    datasetId: string,
    request: GenerateRequest
  ) => Effect.Effect<GenerateResponse, NotFound | ValidationError>
}>()("engram/datasets/TasteTransforms") {
  static readonly layer = Layer.effect(
    TasteTransforms,
    Effect.gen(function*() {
      const datasets = yield* Datasets
      const store = yield* DatasetStore
      const llm = yield* Llm
      const operations = yield* Operations
      const registry = yield* TaskRegistry
      const sql = yield* SqlClient.SqlClient

      const inline = (bankId: string, datasetId: string, schemaType: RunContext["schemaType"]): RunContext => ({
        bankId,
        datasetId,
        schemaType,
        operationId: null,
        progress: () => Effect.void
      })
      const background = (
        operation: OperationRecord,
        datasetId: string,
        schemaType: RunContext["schemaType"],
        stage: string
      ): RunContext => ({
        bankId: operation.bankId,
        datasetId,
        schemaType,
        operationId: operation.id,
        progress: (done, total) =>
          setOperationStage(operation.id, stage, { done, total }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      })
      const needsModel = (field: string, what: string) =>
        llm.available("consolidation")
          ? Effect.void
          : Effect.fail(ValidationError.single(field, `${what} ${offlineMessage}`))

      const transform = Effect.fn("TasteTransforms.transform")(function*(bankId: string, request: TransformRequest) {
        const dataset = yield* datasets.resolveDataset(bankId, request.dataset_id)
        const ops = yield* checkOps(request.ops)
        const llmOp = ops.find((op) => requiresLlm(op.op))
        if (llmOp !== undefined) yield* needsModel("ops", llmOp.op)
        const sets = yield* datasets.resolveSets(bankId, dataset, request.set_ids)
        const preview = request.preview ?? false
        const base = { preview, total_in_dataset: dataset.setCount, processed_count: sets.length }
        if (sets.length > syncTransformLimit) {
          const operation = yield* operations.submit({
            bankId,
            taskType: transformTask,
            payload: { dataset_id: dataset.id, set_ids: sets.map((set) => set.id), ops, preview },
            itemsCount: sets.length
          })
          return { ...base, async: true, operation_id: operation.id, items: [], updated_count: 0, failed_count: 0 }
        }
        const run = yield* runTransform(store, sets, ops, preview, inline(bankId, dataset.id, dataset.schemaType))
          .pipe(Effect.provideService(Llm, llm))
        return {
          ...base,
          async: false,
          operation_id: null,
          items: run.items,
          updated_count: run.updated,
          failed_count: run.failed
        }
      })

      const generate = Effect.fn("TasteTransforms.generate")(
        function*(bankId: string, datasetId: string, request: GenerateRequest) {
          const dataset = yield* datasets.resolveDataset(bankId, datasetId)
          yield* needsModel("set_ids", "generating variants")
          const seeds = yield* datasets.resolveSets(bankId, dataset, request.set_ids)
          const variant = seeds.find((set) => set.variantIndex > 0)
          if (variant !== undefined) {
            return yield* ValidationError.single(
              "set_ids",
              `set '${variant.id}' is a variant; generate from its seed '${variant.parentSetId ?? "(deleted)"}'`
            )
          }
          const count = request.count ?? defaultVariantCount
          const instruction = request.options?.instruction ?? null
          const base = { parent_count: seeds.length, count_per_parent: count }
          if (seeds.length * count > syncGenerateLimit) {
            const operation = yield* operations.submit({
              bankId,
              taskType: variantTask,
              payload: { dataset_id: dataset.id, set_ids: seeds.map((seed) => seed.id), count, instruction },
              itemsCount: seeds.length
            })
            return { ...base, async: true, operation_id: operation.id, created_count: 0, sets: [], failures: [] }
          }
          const run = yield* runGenerate(
            store,
            seeds,
            count,
            instruction,
            inline(bankId, dataset.id, dataset.schemaType)
          )
            .pipe(Effect.provideService(Llm, llm))
          return {
            ...base,
            async: false,
            operation_id: null,
            created_count: run.sets.length,
            sets: run.sets,
            failures: run.failures
          }
        }
      )

      /** The dataset and the still-existing sets a queued run names; a deleted dataset ends the run. */
      const loadTargets = Effect.fnUntraced(
        function*(operation: OperationRecord, datasetId: string, setIds: ReadonlyArray<string>) {
          const dataset = yield* store.findDataset(operation.bankId, datasetId)
          if (Option.isNone(dataset)) {
            return yield* new TaskFailure({ message: `dataset '${datasetId}' no longer exists`, retryable: false })
          }
          const found = new Map((yield* store.findSets(operation.bankId, setIds)).map((row) => [row.id, row]))
          const sets = setIds.flatMap((id) => {
            const row = found.get(id)
            return row !== undefined && row.datasetId === datasetId ? [row] : []
          })
          return { dataset: dataset.value, sets }
        }
      )
      const invalidPayload = () => new TaskFailure({ message: "the stored payload is invalid", retryable: false })

      yield* registry.register(transformTask, (operation) =>
        Effect.gen(function*() {
          const payload = yield* Schema.decodeUnknownEffect(TransformPayload)(operation.payload).pipe(
            Effect.mapError(invalidPayload)
          )
          const { dataset, sets } = yield* loadTargets(operation, payload.dataset_id, payload.set_ids)
          const ops = payload.ops.map((op) => ({ op: op.op, params: op.params ?? {} }))
          const context = background(operation, dataset.id, dataset.schemaType, "transform")
          yield* context.progress(0, sets.length)
          const run = yield* runTransform(store, sets, ops, payload.preview, context).pipe(
            Effect.provideService(Llm, llm)
          )
          yield* setOperationStage(operation.id, "completed", { done: sets.length, total: sets.length })
            .pipe(Effect.provideService(SqlClient.SqlClient, sql))
          return {
            preview: payload.preview,
            async: true,
            operation_id: operation.id,
            items: run.items,
            updated_count: run.updated,
            failed_count: run.failed,
            processed_count: sets.length,
            total_in_dataset: dataset.setCount
          } satisfies TransformResponse
        }))

      yield* registry.register(variantTask, (operation) =>
        Effect.gen(function*() {
          const payload = yield* Schema.decodeUnknownEffect(VariantPayload)(operation.payload).pipe(
            Effect.mapError(invalidPayload)
          )
          const { dataset, sets } = yield* loadTargets(operation, payload.dataset_id, payload.set_ids)
          const context = background(operation, dataset.id, dataset.schemaType, "generate")
          yield* context.progress(0, sets.length)
          const run = yield* runGenerate(store, sets, payload.count, payload.instruction, context).pipe(
            Effect.provideService(Llm, llm)
          )
          yield* setOperationStage(operation.id, "completed", { done: sets.length, total: sets.length })
            .pipe(Effect.provideService(SqlClient.SqlClient, sql))
          return {
            async: true,
            operation_id: operation.id,
            created_count: run.sets.length,
            sets: run.sets,
            parent_count: sets.length,
            count_per_parent: payload.count,
            failures: run.failures
          } satisfies GenerateResponse
        }))

      return TasteTransforms.of({ transform, generate })
    })
  )
}
