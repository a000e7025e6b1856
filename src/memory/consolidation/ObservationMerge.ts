/**
 * Near-duplicate observations are merged, not multiplied. Before a batch is written each draft is compared with
 * the other drafts and with the closest stored observations of its scope; two that say the same thing (close in
 * meaning, mostly the same words, the same numbers) become one observation carrying both sets of sources, and
 * the one that goes is recorded as merged into the one that stays (the older one, so ids stay stable).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { cosine } from "../Cosine.ts"
import { sameNumbers, wordJaccard } from "../retain/ContentHash.ts"
import { union } from "./ConsolidationFact.ts"
import type { EmbeddedDraft } from "./ObservationWriter.ts"
import { nearestObservationsInBrain, nearestObservationsOfMany, type VectorSpace } from "./ObservationReads.ts"
import type { Scope } from "./ObservationScopes.ts"
import type { MemoryRecords } from "../../brain/records/MemoryRecords.ts"

export const mergePolicy = {
  /** Cosine similarity of the two texts' vectors. */
  similarity: 0.85,
  /** Share of distinct words in common. */
  wordOverlap: 0.55
}

export const nearDuplicate = (a: string, b: string, similarity: number): boolean =>
  similarity >= mergePolicy.similarity && wordJaccard(a, b) >= mergePolicy.wordOverlap && sameNumbers(a, b)

/** The text of a merged observation, from the one that stays and all the sources both had. */
export type MergedText<E, R> = (
  survivor: { readonly text: string; readonly key: string | null },
  sourceFactIds: ReadonlyArray<string>
) => Effect.Effect<string, E, R>

export const mergeNearDuplicates = Effect.fn("ObservationMerge.merge")(function*<E, R, E2, R2>(options: {
  readonly bankId: string
  readonly space: VectorSpace
  readonly drafts: ReadonlyArray<EmbeddedDraft>
  readonly mergedText: MergedText<E, R>
  readonly embed: (text: string) => Effect.Effect<Float32Array, E2, R2>
  /** The bank's brain's records, current with its writes: stored observations are searched there, not in SQL. */
  readonly records?: MemoryRecords | undefined
}): Effect.fn.Return<Array<EmbeddedDraft>, E | E2 | SqlError, R | R2 | SqlClient.SqlClient> {
  const nearestOfMany = (
    queries: ReadonlyArray<{ readonly scope: Scope; readonly vector: Float32Array }>,
    exclude: ReadonlyArray<string>
  ) => {
    const read = { bankId: options.bankId, queries, exclude, limit: 3 }
    return options.records === undefined
      ? nearestObservationsOfMany({ ...read, space: options.space })
      : nearestObservationsInBrain(options.records, read)
  }
  /** `embeddedText` is the text the survivor's vector was made from: a changed text is embedded again. */
  const fold = function*(survivor: EmbeddedDraft, other: {
    readonly text: string
    readonly sourceFactIds: ReadonlyArray<string>
    readonly addedFactIds: ReadonlyArray<string>
    readonly absorbedIds: ReadonlyArray<string>
  }, embeddedText: string = survivor.text) {
    const sources = union(survivor.sourceFactIds, other.sourceFactIds)
    const text = yield* options.mergedText(survivor, sources)
    return {
      ...survivor,
      text,
      embedding: text === embeddedText ? survivor.embedding : yield* options.embed(text),
      sourceFactIds: sources,
      addedFactIds: union(survivor.addedFactIds, other.addedFactIds),
      absorbedIds: union(survivor.absorbedIds, other.absorbedIds),
      change: survivor.targetId === null ? survivor.change : "merged" as const
    }
  }

  // Drafts of the same batch first: an update survives a create; of two creates, the first.
  const merged: Array<EmbeddedDraft> = []
  for (const draft of options.drafts) {
    const index = merged.findIndex((kept) =>
      JSON.stringify(kept.scope) === JSON.stringify(draft.scope) &&
      nearDuplicate(kept.text, draft.text, cosine(kept.embedding, draft.embedding))
    )
    if (index < 0) {
      merged.push(draft)
      continue
    }
    const kept = merged[index]!
    const [survivor, other] = kept.targetId === null && draft.targetId !== null ? [draft, kept] : [kept, draft]
    const absorbed = other.targetId === null ? other.absorbedIds : [...other.absorbedIds, other.targetId]
    merged[index] = yield* fold(survivor, { ...other, absorbedIds: absorbed })
  }

  // Then against what the scope already holds.
  const claimed = new Set(
    merged.flatMap((draft) => [...(draft.targetId ? [draft.targetId] : []), ...draft.absorbedIds])
  )
  // The closest stored observations of every draft in one read. A draft whose neighbours an earlier draft of the
  // batch claimed meanwhile (rare: only a merge claims) reads its own again, without them, as it always did.
  const firstRead = yield* nearestOfMany(
    merged.map((draft) => ({ scope: draft.scope, vector: draft.embedding })),
    [...claimed]
  )
  const out: Array<EmbeddedDraft> = []
  for (const [index, draft] of merged.entries()) {
    const nearest = firstRead[index]!.some((stored) => claimed.has(stored.id))
      ? (yield* nearestOfMany([{ scope: draft.scope, vector: draft.embedding }], [...claimed]))[0]!
      : firstRead[index]!
    const twin = nearest.find((stored) => nearDuplicate(stored.text, draft.text, stored.similarity))
    if (twin === undefined) {
      out.push(draft)
      continue
    }
    claimed.add(twin.id)
    if (draft.targetId === null) {
      // A new observation that repeats a stored one: the stored one stays and gains the new sources.
      const folded = yield* fold(
        { ...draft, targetId: twin.id, text: twin.text, key: twin.key ?? draft.key, previousText: twin.text },
        { text: draft.text, sourceFactIds: twin.sourceFactIds, addedFactIds: [], absorbedIds: [] },
        draft.text
      )
      out.push({ ...folded, change: "merged" })
    } else {
      // An update that now repeats another stored observation absorbs it.
      out.push(
        yield* fold(draft, {
          text: twin.text,
          sourceFactIds: twin.sourceFactIds,
          addedFactIds: [],
          absorbedIds: [twin.id]
        })
      )
    }
  }
  return out
})
