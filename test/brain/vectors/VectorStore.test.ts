/**
 * The brain's vector store holds its vectors in pages and grows a page at a time (a doubling array's copy stalled the
 * event loop for 300 ms on the first retain after a 100k brain was loaded); a page starts small, so a small bank's
 * store stays small. Across many pages, written out of order, overwritten and cleared, every vector reads back as
 * written, the exact search answers what a plain scan of the same vectors answers (same slots, same scores, same
 * order), and a `.brain` file's parts round-trip.
 */
import { assert, describe, it } from "@effect/vitest"
import { VectorStore } from "../../../src/brain/vectors/VectorStore.ts"
import { cosine } from "../../../src/memory/Cosine.ts"
import { clusteredVectors } from "../../support/ClusteredVectors.ts"

const dimensions = 24

describe("VectorStore", () => {
  it("holds vectors across many pages as written, and its exact search is a plain scan's", () => {
    const slots = 9_000 // four pages and a part
    const vectors = clusteredVectors(slots + 500, 7, { dimensions, centres: 30 })
    const store = new VectorStore(dimensions) // the default capacity: every page comes from growth
    const held = new Map<number, Float32Array>()
    // Out of order: the last page first, then the rest.
    for (let slot = slots - 1; slot >= slots - 700; slot--) {
      store.set(slot, vectors[slot]!)
      held.set(slot, vectors[slot]!)
    }
    for (let slot = 0; slot < slots - 700; slot++) {
      store.set(slot, vectors[slot]!)
      held.set(slot, vectors[slot]!)
    }
    // Overwritten and cleared, on several pages.
    for (let slot = 3; slot < slots; slot += 97) {
      store.set(slot, vectors[slots + (slot % 500)]!)
      held.set(slot, vectors[slots + (slot % 500)]!)
    }
    for (let slot = 5; slot < slots; slot += 131) {
      store.set(slot, null)
      held.delete(slot)
    }
    assert.strictEqual(store.size, held.size)
    for (let slot = 0; slot < slots; slot++) {
      const expected = held.get(slot)
      assert.strictEqual(store.has(slot), expected !== undefined, `slot ${slot}`)
      if (expected !== undefined) assert.deepStrictEqual([...store.get(slot)!], [...expected], `slot ${slot}`)
    }

    const idOf = (slot: number) => `m-${String(slot).padStart(6, "0")}`
    const odd = (slot: number) => slot % 2 === 1
    for (const query of vectors.slice(slots, slots + 20)) {
      for (const [accept, depth] of [[() => true, 10], [odd, 25]] as const) {
        const scan = [...held]
          .filter(([slot]) => accept(slot))
          .map(([slot, vector]) => ({ slot, score: cosine(query, vector) }))
          .sort((a, b) => b.score - a.score || (idOf(a.slot) < idOf(b.slot) ? -1 : 1))
          .slice(0, depth)
        const found = store.exactTop(query, depth, accept, idOf)
        assert.deepStrictEqual(found.map((hit) => hit.slot), scan.map((hit) => hit.slot))
        for (let i = 0; i < found.length; i++) assert.closeTo(found[i]!.score, scan[i]!.score, 1e-6)
        const norm = Math.sqrt(query.reduce((sum, x) => sum + x * x, 0))
        for (const hit of found) assert.strictEqual(store.similarity(query, norm, hit.slot), hit.score)
      }
    }

    const parts = store.toParts(slots)
    assert.strictEqual(parts.data.length, slots * dimensions)
    const copy = VectorStore.fromParts(dimensions, parts)
    assert.strictEqual(copy.size, held.size)
    for (let slot = 0; slot < slots; slot++) {
      assert.deepStrictEqual(copy.get(slot) && [...copy.get(slot)!], store.get(slot) && [...store.get(slot)!])
    }
  })

  it("grows without moving a full page, and a small store holds kilobytes", () => {
    const vectors = clusteredVectors(5_000, 3, { dimensions, centres: 8 })
    const store = new VectorStore(dimensions, 2)
    store.set(0, vectors[0]!)
    assert.isBelow(store.byteSize, 16 * dimensions * 4 + 100, "one vector does not take a whole page")
    for (let slot = 1; slot < 2_048; slot++) store.set(slot, vectors[slot]!)
    const view = store.get(0)!
    for (let slot = 2_048; slot < 5_000; slot++) store.set(slot, vectors[slot]!)
    assert.deepStrictEqual([...view], [...vectors[0]!])
    assert.strictEqual(store.get(0)!.buffer, view.buffer, "the full first page was not copied")
    for (let slot = 0; slot < 5_000; slot += 7) assert.deepStrictEqual([...store.get(slot)!], [...vectors[slot]!])
  })
})
