/**
 * A big bank's HNSW index built on the index worker from a snapshot of its vectors, while the bank keeps changing:
 * once the index is taken in, it answers like an exact scan for the vectors held now — memories removed since the
 * snapshot are gone, changed vectors are found where they are now, memories removed and written again with another
 * vector are found under the new one, and memories added since are in. An index whose snapshot the records did not
 * follow (read again from the tables meanwhile) is not taken, and a build under way when the server shuts down ends
 * its worker without taking the process down.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { MemoryRecords } from "../../../src/brain/records/MemoryRecords.ts"
import { runWhole } from "../../../src/brain/Sliced.ts"
import { makeHnswBuilder } from "../../../src/brain/vectors/HnswBuilder.ts"
import { clusteredVectors } from "../../support/ClusteredVectors.ts"
import { plainMemory } from "../../support/MemoryInputs.ts"

const dimensions = 100
const everything = { types: ["world"], tags: () => true }

describe("vector index built on the worker", () => {
  it.effect("taken in after the bank changed, it answers for the bank as it is now", () =>
    Effect.gen(function*() {
      const vectors = clusteredVectors(3_200, 11, { dimensions, centres: 40 })
      const fresh = clusteredVectors(400, 12, { dimensions, centres: 40 })
      const records = new MemoryRecords(dimensions)
      records.upsert(vectors.slice(0, 3_000).map((vector, n) => plainMemory(n, vector)))
      assert.isTrue(records.wantsIndex)

      const snapshot = runWhole(records.indexSnapshot())
      assert.strictEqual(snapshot.ids.length, 3_000)
      // While the worker builds: removals, new vectors for old memories, removed-then-rewritten memories, additions.
      for (let n = 0; n < 100; n++) records.remove(`m-${n}`)
      for (let n = 100; n < 200; n++) records.upsert([plainMemory(n, fresh[n - 100]!)])
      for (let n = 200; n < 220; n++) {
        records.remove(`m-${n}`)
        records.upsert([plainMemory(n, fresh[n]!)])
      }
      records.upsert(vectors.slice(3_000).map((vector, n) => plainMemory(3_000 + n, vector)))

      const builder = yield* makeHnswBuilder()
      const index = yield* builder.build(snapshot, dimensions)
      assert.isTrue(runWhole(records.adoptingBuiltIndex(index, snapshot)))
      while (!records.indexStep(64)) { /* what the background takes in after it */ }
      assert.isTrue(records.annReady)
      assert.isFalse(records.wantsIndex)

      const queries = [
        ...Array.from({ length: 40 }, (_, n) => fresh[n]!), // changed vectors: found where they are now
        ...Array.from({ length: 20 }, (_, n) => fresh[200 + n]!), // removed and written again
        ...Array.from({ length: 20 }, (_, n) => vectors[n]!), // removed: nothing of theirs comes back
        ...Array.from({ length: 20 }, (_, n) => vectors[3_000 + n * 10]!) // added since the snapshot
      ]
      for (const query of queries) {
        const approximate = records.nearest(query, everything, 10).map((hit) => hit.id)
        const exact = records.nearest(query, everything, 10, { exact: true }).map((hit) => hit.id)
        assert.strictEqual(approximate[0], exact[0])
        assert.isAtLeast(approximate.filter((id) => exact.includes(id)).length, 9)
      }
      for (let n = 0; n < 100; n++) {
        const found = records.nearest(vectors[n]!, everything, 10).map((hit) => hit.id)
        assert.notInclude(found, `m-${n}`)
      }
    }).pipe(Effect.scoped))

  it.effect("an index built from records that were built again since is not taken", () =>
    Effect.gen(function*() {
      const vectors = clusteredVectors(3_000, 13, { dimensions, centres: 40 })
      const inputs = vectors.map((vector, n) => plainMemory(n, vector))
      const before = new MemoryRecords(dimensions)
      before.upsert(inputs)
      const snapshot = runWhole(before.indexSnapshot())
      const builder = yield* makeHnswBuilder()
      const index = yield* builder.build(snapshot, dimensions)
      // What a bulk change does: the brain read again from the tables, changes made in between not followed.
      const rebuilt = new MemoryRecords(dimensions)
      rebuilt.upsert(inputs.map((input, n) => n < 50 ? { ...input, embedding: vectors[n + 100]! } : input))
      assert.isFalse(runWhole(rebuilt.adoptingBuiltIndex(index, snapshot)))
      assert.isFalse(rebuilt.hasIndex)
      assert.isTrue(rebuilt.wantsIndex)
    }).pipe(Effect.scoped))

  it("a build under way when its builder shuts down ends without taking the process down", () => {
    const script = fileURLToPath(new URL("../../support/hnswShutdownChild.ts", import.meta.url))
    const child = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 150_000 })
    assert.notInclude(child.stderr, "FATAL ERROR")
    assert.strictEqual(child.status, 0, child.stderr.slice(0, 2_000))
    assert.include(child.stdout, "survived")
  }, 180_000)
})
