/**
 * Running a transform chain or a variant generation over a list of sets, inline for small batches or inside a
 * background operation for large ones. A run is idempotent: log entries carry the operation id, so a re-run
 * after a crash skips the sets (and seeds) that run already changed. One set's failure never stops the others.
 */
import { Clock, Effect, Option } from "effect"
import type { SchemaType, TransformItem, TransformLogEntry, TransformOpId } from "../domain/Dataset.ts"
import type { Llm } from "../models/Llm.ts"
import type { DatasetStore, SetRow } from "./DatasetStore.ts"
import { toSetResponse } from "./DatasetStore.ts"
import { logEntry } from "./Datasets.ts"
import type { JsonObject } from "./Payloads.ts"
import { applyOp, generateVariants, type TransformRefused } from "./TransformOps.ts"

export interface ChainOp {
  readonly op: TransformOpId
  readonly params: JsonObject
}

export interface RunContext {
  readonly bankId: string
  readonly datasetId: string
  readonly schemaType: SchemaType
  readonly operationId: string | null
  /** Called after each set with (done, total): a background run reports it as the operation's progress. */
  readonly progress: (done: number, total: number) => Effect.Effect<void>
}

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
const byThisRun = (log: ReadonlyArray<TransformLogEntry>, operationId: string | null) =>
  operationId !== null && log.some((entry) => entry.operation_id === operationId)

/** The chain applied to one payload, with the log entry of each op; the first refused op refuses the chain. */
const runChain = (ops: ReadonlyArray<ChainOp>, payload: JsonObject, context: RunContext) =>
  Effect.gen(function*() {
    let current = payload
    let model: string | null = null
    const entries: Array<TransformLogEntry> = []
    for (const op of ops) {
      const result = yield* applyOp(op.op, op.params, current, {
        bankId: context.bankId,
        operationId: context.operationId,
        schemaType: context.schemaType
      })
      entries.push(logEntry(op.op, op.params, current, result.payload, result.model, yield* now, context.operationId))
      current = result.payload
      model = result.model ?? model
    }
    return { payload: current, model, entries }
  })

export const runTransform = (
  store: typeof DatasetStore.Service,
  sets: ReadonlyArray<SetRow>,
  ops: ReadonlyArray<ChainOp>,
  preview: boolean,
  context: RunContext
): Effect.Effect<
  { readonly items: ReadonlyArray<TransformItem>; readonly updated: number; readonly failed: number },
  never,
  Llm
> =>
  Effect.gen(function*() {
    const items: Array<TransformItem> = []
    let updated = 0
    for (const [index, set] of sets.entries()) {
      const item = (after: JsonObject | null, model: string | null, error: string | null): TransformItem => ({
        set_id: set.id,
        set_key: set.setKey,
        before: set.workingPayload,
        after,
        model,
        error
      })
      if (!preview && byThisRun(set.transformLog, context.operationId)) {
        items.push(item(set.workingPayload, null, null))
        updated++
      } else if (!preview && set.status === "retained") {
        items.push(item(null, null, "the set is retained; revert or archive it before transforming"))
      } else {
        const outcome = yield* runChain(ops, set.workingPayload, context).pipe(Effect.result)
        if (outcome._tag === "Failure") {
          items.push(item(null, null, (outcome.failure as TransformRefused).message))
        } else {
          if (!preview) {
            const saved = yield* store.updateSet(set.id, {
              workingPayload: outcome.success.payload,
              appendLog: outcome.success.entries
            })
            if (Option.isSome(saved)) updated++
          }
          items.push(item(outcome.success.payload, outcome.success.model, null))
        }
      }
      yield* context.progress(index + 1, sets.length)
    }
    return { items, updated, failed: items.filter((item) => item.error !== null).length }
  })

export const runGenerate = (
  store: typeof DatasetStore.Service,
  seeds: ReadonlyArray<SetRow>,
  count: number,
  instruction: string | null,
  context: RunContext
) =>
  Effect.gen(function*() {
    const created: Array<SetRow> = []
    const failures: Array<{ set_id: string; error: string }> = []
    const existing = context.operationId === null ? [] : yield* store.allSets(context.datasetId)
    for (const [index, seed] of seeds.entries()) {
      const already = existing.filter((row) =>
        row.parentSetId === seed.id && byThisRun(row.transformLog, context.operationId)
      )
      if (already.length > 0) {
        created.push(...already)
      } else {
        const outcome = yield* generateVariants(seed.workingPayload, count, instruction, {
          bankId: context.bankId,
          operationId: context.operationId,
          schemaType: context.schemaType
        }).pipe(Effect.result)
        if (outcome._tag === "Failure") {
          failures.push({ set_id: seed.id, error: outcome.failure.message })
        } else {
          const at = yield* now
          const params = { parent_set_id: seed.id, ...(instruction === null ? {} : { instruction }) }
          const inserted = yield* store.exclusive(
            context.datasetId,
            Effect.flatMap(store.maxVariantIndex(context.datasetId, seed.setKey), (highest) =>
              store.insertSets(
                context.bankId,
                context.datasetId,
                outcome.success.variants.map((variant, offset) => ({
                  id: crypto.randomUUID(),
                  setKey: seed.setKey,
                  variantIndex: highest + 1 + offset,
                  parentSetId: seed.id,
                  // A variant's own seed is the text it was generated as: revert returns to that, not to the parent.
                  sourcePayload: variant,
                  workingPayload: variant,
                  transformLog: [
                    logEntry(
                      "generate_variant",
                      params,
                      seed.workingPayload,
                      variant,
                      outcome.success.model,
                      at,
                      context.operationId
                    )
                  ],
                  tasteTags: seed.tasteTags
                }))
              ))
          )
          created.push(...inserted)
        }
      }
      yield* context.progress(index + 1, seeds.length)
    }
    return { sets: created.map(toSetResponse), failures }
  })
