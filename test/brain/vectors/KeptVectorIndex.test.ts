/**
 * A bank's HNSW index kept beside its `.brain` file: written, sealed and read back, it answers exactly as the index it
 * was taken from, over records rebuilt from the file's parts; the vectors of memories removed before it was written
 * are not in the file once it is sealed (they were before); a file that does not fit its records is refused, and
 * memories added after it was written are queued and taken in.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { newIndexFileName, readKeptIndex, sealedIndex } from "../../../src/brain/file/KeptVectorIndex.ts"
import { MemoryRecords } from "../../../src/brain/records/MemoryRecords.ts"
import { recordsFromParts, recordsToParts } from "../../../src/brain/records/RecordParts.ts"
import { clusteredVectors } from "../../support/ClusteredVectors.ts"
import { plainMemory } from "../../support/MemoryInputs.ts"

const dimensions = 100

const clustered = (count: number, seed: number) => clusteredVectors(count, seed, { dimensions, centres: 40 })

/** The vector as hnswlib-node stores it under cosine (normalised in float32), as bytes to look for in a file. */
const storedBytes = (vector: Float32Array) => {
  let sum = 0
  for (const x of vector) sum = Math.fround(sum + Math.fround(x * x))
  const norm = Math.fround(Math.sqrt(sum))
  return Buffer.from(Float32Array.from(vector, (x) => x / norm).buffer)
}

const indexedRecords = (vectors: ReadonlyArray<Float32Array>) => {
  const records = new MemoryRecords(dimensions)
  records.upsert(vectors.map((vector, n) => plainMemory(n, vector)))
  records.startIndex()
  while (!records.indexStep(5_000)) { /* filled in steps, as in the background */ }
  return records
}

const everything = { types: ["world"], tags: () => true }

describe("kept vector index", () => {
  it.effect(
    "read back over the file's records, it answers as the index it was taken from; removed vectors are gone",
    () =>
      Effect.gen(function*() {
        const directory = mkdtempSync(join(tmpdir(), "engram-hnsw-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
        const vectors = clustered(3_000, 5)
        const records = indexedRecords(vectors)
        const removed = [7, 700, 2_999]
        for (const n of removed) records.remove(`m-${n}`)
        const name = newIndexFileName("bank/one")
        const positions = yield* Effect.promise(() => records.writeIndex(join(directory, name)))
        assert.isDefined(positions)
        const written = readFileSync(join(directory, name))
        for (const n of removed) assert.isAtLeast(written.indexOf(storedBytes(vectors[n]!)), 0, "before sealing")
        const ref = yield* sealedIndex(directory, name, positions!)
        const sealed = readFileSync(join(directory, name))
        for (const n of removed) assert.strictEqual(sealed.indexOf(storedBytes(vectors[n]!)), -1, `m-${n} kept`)
        assert.isAtLeast(sealed.indexOf(storedBytes(vectors[8]!)), 0, "a live vector stays")

        // What a start does: records from the file's parts, then the index read back and adopted.
        const parts = recordsToParts(records)
        const restored = recordsFromParts(parts)
        const index = yield* readKeptIndex(directory, "bank/one", ref, parts.columns.ids, dimensions)
        assert.isTrue(Option.isSome(index))
        restored.adoptIndex(Option.getOrThrow(index))
        assert.isTrue(restored.annReady)
        assert.isFalse(restored.wantsIndex)
        for (const query of clustered(20, 5)) {
          const found = restored.nearest(query, everything, 30)
          assert.deepStrictEqual(found, records.nearest(query, everything, 30))
          for (const n of removed) assert.isFalse(found.some((hit) => hit.id === `m-${n}`))
        }

        // Another bank's name, another dimension, or a size that does not match: not read.
        const elsewhere = yield* readKeptIndex(directory, "bank/two", ref, parts.columns.ids, dimensions)
        assert.isTrue(Option.isNone(elsewhere))
        const otherDimensions = yield* readKeptIndex(directory, "bank/one", ref, parts.columns.ids, 64)
        assert.isTrue(Option.isNone(otherDimensions))
        const resized = yield* readKeptIndex(
          directory,
          "bank/one",
          { ...ref, bytes: ref.bytes - 1 },
          parts.columns.ids,
          dimensions
        )
        assert.isTrue(Option.isNone(resized))
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect(
    "memories added after the index was kept are queued and taken in; ones no longer held are dropped",
    () =>
      Effect.gen(function*() {
        const directory = mkdtempSync(join(tmpdir(), "engram-hnsw-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(directory, { recursive: true, force: true })))
        const vectors = clustered(3_200, 9)
        const records = indexedRecords(vectors.slice(0, 3_000))
        const name = newIndexFileName("b")
        const positions = yield* Effect.promise(() => records.writeIndex(join(directory, name)))
        const ref = yield* sealedIndex(directory, name, positions!)
        const parts = recordsToParts(records)
        // The bank moved on: 200 memories more, one gone.
        const later = recordsFromParts(parts)
        later.upsert(vectors.slice(3_000).map((vector, i) => plainMemory(3_000 + i, vector)))
        later.remove("m-10")
        const index = yield* readKeptIndex(directory, "b", ref, parts.columns.ids, dimensions)
        later.adoptIndex(Option.getOrThrow(index))
        assert.isTrue(later.indexPending)
        assert.isFalse(later.annReady)
        while (!later.indexStep(16)) { /* as the background does */ }
        assert.isTrue(later.annReady)
        const fresh = indexedRecords(vectors)
        fresh.remove("m-10")
        for (const query of vectors.slice(3_000, 3_020)) {
          const found = later.nearest(query, everything, 10)
          assert.strictEqual(found[0]?.id, fresh.nearest(query, everything, 10, { exact: true })[0]?.id)
          assert.isFalse(found.some((hit) => hit.id === "m-10"))
        }
      }).pipe(Effect.scoped),
    60_000
  )
})
