/**
 * The brain's memory records on their own: nearest neighbours from the HNSW index of a big bank match the exact scan
 * closely (the same scores for what both return), respect the request's scope, forget removed memories, and keep
 * answering after the records are compacted; the time window finds what SQL's overlap condition finds.
 */
import { assert, describe, it } from "@effect/vitest"
import { type MemoryInput, MemoryRecords } from "../../../src/brain/records/MemoryRecords.ts"
import { clusteredVectors } from "../../support/ClusteredVectors.ts"

const dimensions = 100

const memory = (n: number, vector: Float32Array, overrides: Partial<MemoryInput> = {}): MemoryInput => ({
  id: `m-${String(n).padStart(6, "0")}`,
  seq: n + 1,
  text: `memory ${n}`,
  factType: n % 3 === 0 ? "observation" : "world",
  context: null,
  occurredStart: null,
  occurredEnd: null,
  mentionedAt: Date.UTC(2024, 0, 1) + n * 3_600_000,
  createdAt: Date.UTC(2025, 0, 1),
  documentId: null,
  chunkId: null,
  metadata: null,
  tags: n % 2 === 0 ? ["even"] : [],
  sourceFactIds: null,
  confidence: null,
  supersededBy: null,
  expiresAt: null,
  entityIds: [],
  embedding: vector,
  ...overrides
})

const clustered = (count: number, seed: number) => clusteredVectors(count, seed, { dimensions, centres: 60 })

describe("memory records", () => {
  it(
    "a big bank's HNSW index answers like the exact scan, within scope, without removed memories, after compaction",
    () => {
      const vectors = clustered(18_000, 7)
      const records = new MemoryRecords(dimensions)
      records.upsert(vectors.map((vector, n) => memory(n, vector)))
      assert.isTrue(records.wantsIndex)
      records.startIndex()
      while (!records.indexStep(5_000)) { /* filled in steps, as in the background */ }
      assert.isTrue(records.annReady)
      const scope = { types: ["world"], tags: (tags: ReadonlyArray<string>) => tags.includes("even") }
      // Queries near the same clusters (seed 7's centres), as real queries land near what was stored.
      const queries = clustered(40, 7).map((q) => q.map((x) => x + 0.01))
      // Every type and no tag filter: searched without the index's filter (deleted points never answer).
      const everything = { types: ["world", "observation"] }
      const overlap = (removed: Set<string>, within: typeof scope | typeof everything = scope) => {
        let found = 0
        for (const query of queries) {
          const fast = records.nearest(query, within, 50)
          const exact = records.nearest(query, within, 50, { exact: true })
          const exactScore = new Map(exact.map((hit) => [hit.id, hit.score]))
          for (const hit of fast) {
            const n = Number(hit.id.slice(2))
            assert.isTrue(
              (within === everything || (n % 3 !== 0 && n % 2 === 0)) && !removed.has(hit.id),
              `${hit.id} is outside the scope or removed`
            )
            if (exactScore.has(hit.id)) {
              found++
              assert.strictEqual(hit.score, exactScore.get(hit.id))
            }
          }
          assert.strictEqual(fast.length, 50)
        }
        return found / (queries.length * 50)
      }
      assert.isAtLeast(overlap(new Set()), 0.95)
      const removed = new Set<string>()
      for (let n = 0; n < 18_000; n += 4) {
        const id = memory(n, vectors[n]!).id
        records.remove(id)
        removed.add(id)
      }
      assert.isAtLeast(overlap(removed), 0.95)
      assert.isAtLeast(overlap(removed, everything), 0.95)
      const compacted = records.compacted()
      assert.isTrue(compacted.annReady)
      for (const query of queries.slice(0, 10)) {
        assert.deepStrictEqual(compacted.nearest(query, scope, 50), records.nearest(query, scope, 50))
      }
    },
    120_000
  )

  it("a memory read again with its vector unchanged keeps its index point; one with a new vector is found by it", () => {
    const vectors = clustered(3_000, 11)
    const records = new MemoryRecords(dimensions)
    records.upsert(vectors.map((vector, n) => memory(n, vector)))
    records.startIndex()
    while (!records.indexStep(5_000)) { /* filled in steps, as in the background */ }
    assert.isFalse(records.wantsIndex)
    // Every memory read again after another field changed (as access telemetry and confidence updates do).
    records.upsert(vectors.map((vector, n) => memory(n, Float32Array.from(vector), { confidence: 0.5 })))
    // Re-adding each point would have marked the old one deleted: half the index dead, and a rebuild wanted.
    assert.isFalse(records.wantsIndex)
    assert.isTrue(records.annReady)
    const moved = Float32Array.from({ length: dimensions }, (_, i) => (i % 2 === 0 ? 3 : -3))
    records.upsert([memory(43, moved)])
    assert.strictEqual(records.nearest(moved, { types: ["world"], tags: () => true }, 1)[0]?.id, memory(43, moved).id)
  })

  it("a large write to an indexed bank adds a few points at once and queues the rest; searches see the queued ones", () => {
    const vectors = clustered(3_400, 13)
    const records = new MemoryRecords(dimensions)
    records.upsert(vectors.slice(0, 3_000).map((vector, n) => memory(n, vector)))
    records.startIndex()
    const scope = { types: ["world", "observation"], tags: () => true }
    const query = vectors[3_200]!.map((x) => x + 0.01)
    // A fresh index lacking more than a scan's worth of vectors (3,000 of 100 dimensions) answers nothing yet.
    assert.deepStrictEqual(records.nearest(query, scope, 20), records.nearest(query, scope, 20, { exact: true }))
    while (!records.indexStep(5_000)) { /* filled in steps, as in the background */ }
    records.upsert([memory(3_000, vectors[3_000]!)])
    assert.isTrue(records.annReady, "a small write goes into the index at once")
    // A retain of a hundred items, or a consolidation batch: hundreds of points would hold the event loop.
    records.upsert(vectors.slice(3_001, 3_400).map((vector, n) => memory(3_001 + n, vector)))
    assert.strictEqual(records.indexQueued, 399 - 16, "sixteen points at once, the rest queued")
    assert.isFalse(records.annReady)
    const exact = records.nearest(query, scope, 20, { exact: true })
    const exactScore = new Map(exact.map((hit) => [hit.id, hit.score]))
    const queued = (hits: ReadonlyArray<{ readonly id: string }>) =>
      hits.filter((hit) => Number(hit.id.slice(2)) > 3_016)
    assert.isAtLeast(queued(exact).length, 3, "the query lands among the queued memories")
    // The index's candidates and the queued vectors, scored exactly: the queued memories the scan finds are found.
    const meanwhile = records.nearest(query, scope, 20)
    assert.strictEqual(meanwhile.length, 20)
    assert.includeMembers(queued(meanwhile).map((hit) => hit.id), queued(exact).map((hit) => hit.id))
    assert.isAtLeast(meanwhile.filter((hit) => exactScore.get(hit.id) === hit.score).length, 18)
    let slices = 0
    while (!records.indexStep(16)) slices++
    assert.strictEqual(slices, Math.ceil((399 - 16) / 16) - 1)
    assert.isTrue(records.annReady)
    const indexed = records.nearest(query, scope, 20)
    assert.isAtLeast(indexed.filter((hit) => exactScore.get(hit.id) === hit.score).length, 18)
  })

  it("the time window finds the memories whose time overlaps it, nearest its middle first", () => {
    const records = new MemoryRecords(2)
    const day = 86_400_000
    records.upsert([
      memory(0, Float32Array.from([1, 0]), {
        occurredStart: Date.UTC(2024, 0, 10),
        occurredEnd: Date.UTC(2024, 0, 20)
      }),
      memory(1, Float32Array.from([1, 0]), { mentionedAt: Date.UTC(2024, 0, 15) }),
      memory(2, Float32Array.from([1, 0]), { mentionedAt: Date.UTC(2024, 1, 15) }),
      memory(3, Float32Array.from([1, 0]), { mentionedAt: null })
    ])
    const found = records.inWindow({ start: Date.UTC(2024, 0, 14), end: Date.UTC(2024, 0, 16) }, {
      types: ["world", "observation"]
    }, 10)
    assert.deepStrictEqual(found.map((hit) => hit.id), ["m-000001", "m-000000"])
    assert.isAbove(found[0]!.score, found[1]!.score)
    assert.strictEqual(records.inWindow({ start: 0, end: day }, { types: ["world"] }, 10).length, 0)
  })

  it("a memory is out of every scope from the instant it expires, and back when its expiry is cleared", () => {
    const records = new MemoryRecords(2)
    const at = Date.UTC(2030, 0, 1)
    records.upsert([
      memory(1, Float32Array.from([1, 0]), { expiresAt: at }),
      memory(2, Float32Array.from([1, 0.1]))
    ])
    const scope = (now: number) => ({ types: ["world"], now })
    const nearest = (now: number) => records.nearest(Float32Array.from([1, 0]), scope(now), 10).map((hit) => hit.id)
    const window = { start: Date.UTC(2024, 0, 1), end: Date.UTC(2024, 0, 2) }
    assert.deepStrictEqual(nearest(at - 1), ["m-000001", "m-000002"])
    assert.deepStrictEqual(nearest(at), ["m-000002"])
    assert.deepStrictEqual(records.inWindow(window, scope(at), 10).map((hit) => hit.id), ["m-000002"])
    assert.isFalse(records.inScope("m-000001", scope(at)))
    assert.isFalse(records.liveAt("m-000001", at))
    assert.deepStrictEqual([...records.expiredAt(at) ?? []], ["m-000001"])
    assert.strictEqual(records.row("m-000001")?.expiresAt?.getTime(), at)
    records.upsert([memory(1, Float32Array.from([1, 0]), { expiresAt: null })])
    assert.deepStrictEqual(nearest(at), ["m-000001", "m-000002"])
    assert.strictEqual(records.expiredAt(at), undefined)
  })
})
