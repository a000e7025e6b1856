/**
 * Datasets and their sets: create, read, update and delete datasets; import sets (all rows or none), list,
 * read, edit and revert them. Every change to a set's working payload is appended to its transform log with
 * the payload hashes before and after. Transforms, variants, retain and export live beside this in their own
 * services and reach datasets through `resolveDataset` / `resolveSets`.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { Banks } from "../bank/Banks.ts"
import type {
  DatasetCreate,
  DatasetResponse,
  DatasetUpdate,
  SetImport,
  SetResponse,
  SetStatus,
  SetUpdate,
  TransformLogEntry
} from "../domain/Dataset.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { type DatasetRow, DatasetStore, type SetRow, toDatasetResponse, toSetResponse } from "./DatasetStore.ts"
import { importRows } from "./ImportRows.ts"
import { runSliced } from "../brain/Sliced.ts"
import { type JsonObject, normalizeSchemaType, payloadHash, payloadProblems } from "./Payloads.ts"
import { statusChangeProblem } from "./SetStatusRules.ts"

const unique = (values: ReadonlyArray<string>) => [...new Set(values.map((value) => value.trim()))]

/** A log entry for a change of working payload (edits, reverts, transforms). */
export const logEntry = (
  op: string,
  params: JsonObject,
  before: JsonObject,
  after: JsonObject,
  model: string | null,
  at: Date,
  operationId: string | null = null
): TransformLogEntry => ({
  op,
  params,
  before_hash: payloadHash(before),
  after_hash: payloadHash(after),
  model,
  at: at.toISOString(),
  ...(operationId === null ? {} : { operation_id: operationId })
})

export class Datasets extends Context.Service<Datasets, {
  readonly list: (bankId: string) => Effect.Effect<{ readonly datasets: ReadonlyArray<DatasetResponse> }, NotFound>
  readonly create: (bankId: string, input: DatasetCreate) => Effect.Effect<DatasetResponse>
  readonly get: (bankId: string, id: string) => Effect.Effect<DatasetResponse, NotFound>
  readonly update: (
    bankId: string,
    id: string,
    input: DatasetUpdate
  ) => Effect.Effect<DatasetResponse, NotFound | ValidationError>
  readonly remove: (
    bankId: string,
    id: string
  ) => Effect.Effect<{ deleted: boolean; dataset_id: string; sets_deleted: number }, NotFound>
  readonly listSets: (bankId: string, datasetId: string, filter: {
    readonly status?: SetStatus | undefined
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<
    { dataset_id: string; sets: ReadonlyArray<SetResponse>; total: number; limit: number; offset: number },
    NotFound
  >
  readonly importSets: (bankId: string, datasetId: string, request: SetImport) => Effect.Effect<
    { dataset_id: string; imported_count: number; sets: ReadonlyArray<SetResponse> },
    NotFound | ValidationError
  >
  readonly getSet: (bankId: string, setId: string) => Effect.Effect<SetResponse, NotFound>
  readonly updateSet: (
    bankId: string,
    setId: string,
    input: SetUpdate
  ) => Effect.Effect<SetResponse, NotFound | ValidationError>
  readonly revert: (bankId: string, setId: string) => Effect.Effect<SetResponse, NotFound>
  /** The dataset of the bank, or 404 (also when the bank does not exist). */
  readonly resolveDataset: (bankId: string, id: string) => Effect.Effect<DatasetRow, NotFound>
  /**
   * The named sets of one dataset in the order given (every set when `ids` is absent or empty): 404 for an
   * unknown id, 400 for a set of another dataset.
   */
  readonly resolveSets: (
    bankId: string,
    dataset: DatasetRow,
    ids: ReadonlyArray<string> | null | undefined
  ) => Effect.Effect<ReadonlyArray<SetRow>, NotFound | ValidationError>
}>()("engram/datasets/Datasets") {
  static readonly layer = Layer.effect(
    Datasets,
    Effect.gen(function*() {
      const store = yield* DatasetStore
      const banks = yield* Banks
      const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

      const resolveDataset = Effect.fn("Datasets.resolveDataset")(function*(bankId: string, id: string) {
        yield* banks.get(bankId)
        const found = yield* store.findDataset(bankId, id)
        if (Option.isNone(found)) return yield* NotFound.of("dataset", id)
        return found.value
      })

      const findSet = Effect.fn("Datasets.findSet")(function*(bankId: string, setId: string) {
        yield* banks.get(bankId)
        const [found] = yield* store.findSets(bankId, [setId])
        if (found === undefined) return yield* NotFound.of("set", setId)
        const dataset = yield* store.findDataset(bankId, found.datasetId)
        if (Option.isNone(dataset)) return yield* NotFound.of("set", setId)
        return { set: found, dataset: dataset.value }
      })

      const resolveSets = Effect.fn("Datasets.resolveSets")(function*(
        bankId: string,
        dataset: DatasetRow,
        ids: ReadonlyArray<string> | null | undefined
      ) {
        if (ids === null || ids === undefined || ids.length === 0) return yield* store.allSets(dataset.id)
        const wanted = [...new Set(ids)]
        const found = new Map((yield* store.findSets(bankId, wanted)).map((row) => [row.id, row]))
        const missing = wanted.find((id) => !found.has(id))
        if (missing !== undefined) return yield* NotFound.of("set", missing)
        const foreign = wanted.find((id) => found.get(id)!.datasetId !== dataset.id)
        if (foreign !== undefined) {
          return yield* ValidationError.single(
            "set_ids",
            `set '${foreign}' belongs to dataset '${found.get(foreign)!.datasetId}', not '${dataset.id}'`
          )
        }
        return wanted.map((id) => found.get(id)!)
      })

      const create = Effect.fn("Datasets.create")(function*(bankId: string, input: DatasetCreate) {
        yield* banks.ensure(bankId)
        return toDatasetResponse(
          yield* store.createDataset({
            id: crypto.randomUUID(),
            bankId,
            name: input.name.trim(),
            description: input.description ?? null,
            schemaType: normalizeSchemaType(input.schema_type ?? "chat_messages"),
            tasteTags: unique(input.taste_tags ?? [])
          })
        )
      })

      const update = Effect.fn("Datasets.update")(function*(bankId: string, id: string, input: DatasetUpdate) {
        const current = yield* resolveDataset(bankId, id)
        if (input.schema_type !== undefined) {
          const asked = typeof input.schema_type === "string"
            ? normalizeSchemaType(input.schema_type)
            : input.schema_type
          if (asked !== current.schemaType) {
            return yield* ValidationError.single(
              "schema_type",
              `is fixed at creation (this dataset is ${current.schemaType})`
            )
          }
        }
        yield* store.updateDataset(bankId, id, {
          name: input.name?.trim() ?? current.name,
          description: input.description === undefined ? current.description : input.description,
          tasteTags: input.taste_tags === undefined || input.taste_tags === null
            ? current.tasteTags
            : unique(input.taste_tags),
          tasteProfile: input.taste_profile ?? current.tasteProfile
        })
        return toDatasetResponse(yield* resolveDataset(bankId, id))
      })

      const importSets = Effect.fn("Datasets.importSets")(
        function*(bankId: string, datasetId: string, request: SetImport) {
          const dataset = yield* resolveDataset(bankId, datasetId)
          const rows = yield* runSliced(importRows(request, dataset.schemaType), Effect.yieldNow)
          if (rows._tag === "invalid") return yield* rows.error
          // Keys continue after the dataset's seeds (never reused: seeds are only deleted with their dataset).
          const prefix = request.set_key_prefix ?? "set"
          const tags = unique([...dataset.tasteTags, ...(request.taste_tags ?? [])])
          const inserted = yield* store.exclusive(
            dataset.id,
            Effect.flatMap(store.seedCount(dataset.id), (seeds) =>
              store.insertSets(
                bankId,
                dataset.id,
                rows.payloads.map((payload, index) => ({
                  id: crypto.randomUUID(),
                  setKey: `${prefix}_${String(seeds + 1 + index).padStart(4, "0")}`,
                  variantIndex: 0,
                  parentSetId: null,
                  sourcePayload: payload,
                  workingPayload: payload,
                  transformLog: [],
                  tasteTags: tags
                }))
              ))
          )
          return { dataset_id: dataset.id, imported_count: inserted.length, sets: inserted.map(toSetResponse) }
        }
      )

      const updateSet = Effect.fn("Datasets.updateSet")(function*(bankId: string, setId: string, input: SetUpdate) {
        const { set, dataset } = yield* findSet(bankId, setId)
        const problem = input.status === undefined ? null : statusChangeProblem(set.status, input.status)
        if (problem !== null) return yield* ValidationError.single("status", problem)
        let appendLog: ReadonlyArray<TransformLogEntry> = []
        let workingPayload: JsonObject | undefined
        if (input.working_payload !== undefined) {
          if (set.status === "retained") {
            return yield* ValidationError.single(
              "working_payload",
              "the set is retained; revert or archive it before editing"
            )
          }
          const problems = payloadProblems(dataset.schemaType, input.working_payload)
          if (problems.length > 0) {
            return yield* ValidationError.single(
              "working_payload",
              `${problems.join("; ")} (schema type ${dataset.schemaType})`
            )
          }
          workingPayload = input.working_payload as JsonObject
          appendLog = [logEntry("edit", {}, set.workingPayload, workingPayload, null, yield* now)]
        }
        const updated = yield* store.updateSet(set.id, {
          ...(workingPayload === undefined ? {} : { workingPayload }),
          appendLog,
          ...(input.status === undefined ? {} : { status: input.status }),
          ...(input.taste_tags === undefined || input.taste_tags === null
            ? {}
            : { tasteTags: unique(input.taste_tags) })
        })
        if (Option.isNone(updated)) return yield* NotFound.of("set", setId)
        return toSetResponse(updated.value)
      })

      /** Back to the seed and to draft; the memories a retain made stay in the bank, but the set no longer claims them. */
      const revert = Effect.fn("Datasets.revert")(function*(bankId: string, setId: string) {
        const { set } = yield* findSet(bankId, setId)
        const updated = yield* store.updateSet(set.id, {
          workingPayload: set.sourcePayload,
          appendLog: [logEntry("revert", {}, set.workingPayload, set.sourcePayload, null, yield* now)],
          status: "draft",
          memoryUnitIds: []
        })
        if (Option.isNone(updated)) return yield* NotFound.of("set", setId)
        return toSetResponse(updated.value)
      })

      return Datasets.of({
        list: (bankId) =>
          banks.get(bankId).pipe(
            Effect.andThen(store.listDatasets(bankId)),
            Effect.map((rows) => ({ datasets: rows.map(toDatasetResponse) }))
          ),
        create,
        get: (bankId, id) => Effect.map(resolveDataset(bankId, id), toDatasetResponse),
        update,
        remove: Effect.fn("Datasets.remove")(function*(bankId: string, id: string) {
          yield* resolveDataset(bankId, id)
          const deleted = yield* store.deleteDataset(bankId, id)
          if (Option.isNone(deleted)) return yield* NotFound.of("dataset", id)
          return { deleted: true, dataset_id: id, sets_deleted: deleted.value }
        }),
        listSets: Effect.fn("Datasets.listSets")(function*(bankId, datasetId, filter) {
          const dataset = yield* resolveDataset(bankId, datasetId)
          const page = yield* store.listSets(dataset.id, filter)
          return {
            dataset_id: dataset.id,
            sets: page.sets.map(toSetResponse),
            total: page.total,
            limit: filter.limit,
            offset: filter.offset
          }
        }),
        importSets,
        getSet: (bankId, setId) => Effect.map(findSet(bankId, setId), ({ set }) => toSetResponse(set)),
        updateSet,
        revert,
        resolveDataset,
        resolveSets
      })
    })
  )
}
