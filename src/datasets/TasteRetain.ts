/**
 * POST retain: sends sets into the bank through the ordinary retain path (extraction, entities, links, the
 * bank's configured model or the offline extractor) as tagged memories, then links the memory ids to each set.
 * The sets are claimed as `retained` before the retain runs, so two requests cannot both retain one set; a
 * failed retain gives them back their previous status.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SetResponse } from "../domain/Dataset.ts"
import { NotFound, type ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import type { MemoryItem } from "../domain/Memory.ts"
import { Retain } from "../memory/retain/Retain.ts"
import { Datasets } from "./Datasets.ts"
import { type DatasetRow, DatasetStore, type SetRow, toSetResponse } from "./DatasetStore.ts"
import { retainText } from "./Payloads.ts"

/** Sets one retain request may carry: each becomes a document, extracted synchronously. */
export const maxRetainSets = 200

const contextLabel = { chat_messages: "set", qa_pair: "Q&A", custom: "custom" } as const

export const retainTags = (dataset: DatasetRow, set: SetRow) => [
  ...new Set([...set.tasteTags, `taste:dataset:${dataset.id}`, `taste:set:${set.setKey}`, "source:taste_studio"])
]

/** One document per set, named after the set: retaining a set again after a revert replaces its memories. */
const toItem = (dataset: DatasetRow, set: SetRow): MemoryItem => ({
  content: retainText(dataset.schemaType, set.workingPayload),
  context: `Taste Studio ${contextLabel[dataset.schemaType]} ${set.setKey}`,
  document_id: `taste_${set.id}`,
  tags: retainTags(dataset, set),
  metadata: {
    taste_dataset_id: dataset.id,
    taste_set_id: set.id,
    taste_set_key: set.setKey,
    taste_variant_index: String(set.variantIndex)
  }
})

export class TasteRetain extends Context.Service<TasteRetain, {
  readonly retain: (bankId: string, setIds: ReadonlyArray<string>) => Effect.Effect<
    { retained_count: number; memory_unit_ids: ReadonlyArray<string>; sets: ReadonlyArray<SetResponse> },
    NotFound | ValidationError | ServiceUnavailable
  >
}>()("engram/datasets/TasteRetain") {
  static readonly layer = Layer.effect(
    TasteRetain,
    Effect.gen(function*() {
      const datasets = yield* Datasets
      const store = yield* DatasetStore
      const retainService = yield* Retain
      const sql = yield* SqlClient.SqlClient

      const unitIdsByDocument = (bankId: string, documentIds: ReadonlyArray<string>) =>
        sql<{ id: string; documentId: string }>`SELECT id, document_id FROM memory_units
          WHERE bank_id = ${bankId} AND document_id IN ${sql.in([...documentIds])} ORDER BY created_at, id`.pipe(
          Effect.orDie,
          Effect.map((rows) => {
            const grouped = new Map<string, Array<string>>()
            for (const row of rows) grouped.set(row.documentId, [...(grouped.get(row.documentId) ?? []), row.id])
            return grouped
          })
        )

      const retain = Effect.fn("TasteRetain.retain")(function*(bankId: string, setIds: ReadonlyArray<string>) {
        const ids = [...new Set(setIds)]
        if (ids.length > maxRetainSets) {
          return yield* ValidationError.single("set_ids", `at most ${maxRetainSets} sets per retain request`)
        }
        const [first] = yield* store.findSets(bankId, [ids[0]!])
        if (first === undefined) return yield* NotFound.of("set", ids[0]!)
        const dataset = yield* datasets.resolveDataset(bankId, first.datasetId)
        const sets = yield* datasets.resolveSets(bankId, dataset, ids)
        const blocked = sets.find((set) => set.status === "retained" || set.status === "archived")
        if (blocked !== undefined) {
          return yield* ValidationError.single(
            "set_ids",
            blocked.status === "retained"
              ? `set '${blocked.id}' (${blocked.setKey}) is already retained`
              : `set '${blocked.id}' (${blocked.setKey}) is archived; set it back to draft first`
          )
        }
        const claimed = yield* store.claimStatus(ids, ["draft", "ready"], "retained")
        const giveBack = Effect.forEach(
          sets.filter((set) => claimed.some((row) => row.id === set.id)),
          (set) => store.updateSet(set.id, { status: set.status }),
          { discard: true }
        )
        if (claimed.length < ids.length) {
          yield* giveBack
          return yield* ValidationError.single("set_ids", "some of the sets were retained by another request meanwhile")
        }
        yield* retainService.retainNow(bankId, { items: sets.map((set) => toItem(dataset, set)) }).pipe(
          Effect.tapError(() => giveBack)
        )
        const units = yield* unitIdsByDocument(bankId, sets.map((set) => `taste_${set.id}`))
        const updated = yield* Effect.forEach(
          sets,
          (set) => store.updateSet(set.id, { memoryUnitIds: units.get(`taste_${set.id}`) ?? [] })
        )
        const rows = updated.flatMap((row) => (row._tag === "Some" ? [row.value] : []))
        return {
          retained_count: rows.length,
          memory_unit_ids: rows.flatMap((row) => row.memoryUnitIds),
          sets: rows.map(toSetResponse)
        }
      })

      return TasteRetain.of({ retain })
    })
  )
}
