/** Ranking the reached nodes: the radix sort for whole results and the selection for a top-k agree. */
import { assert, describe, it } from "@effect/vitest"
import { makeRankBuffers, rankByActivation } from "../../../src/brain/graph/ActivationRanking.ts"

/** The ranking as a comparator sort would give it: float32 value descending, then position. */
const expected = (values: Float64Array, count: number) =>
  Array.from(values.keys())
    .sort((a, b) => Math.fround(values[b]!) - Math.fround(values[a]!) || a - b)
    .slice(0, count)

describe("rankByActivation", () => {
  it("orders by activation, ties by position, for whole results and for a top-k", () => {
    let state = 3
    const next = () => (state = (state * 1664525 + 1013904223) >>> 0) / 4294967296
    const buffers = makeRankBuffers(16)
    for (const length of [1, 2, 17, 1000, 20_000]) {
      // Few distinct values, so ties are common.
      const values = Float64Array.from({ length }, () => Math.ceil(next() * 50) / 50)
      for (const count of [length, Math.min(length, 5)]) {
        const order = rankByActivation(values, length, count, buffers)
        assert.deepStrictEqual([...order.subarray(0, count)], expected(values, count), `${length} / ${count}`)
      }
    }
    assert.strictEqual(rankByActivation(new Float64Array(0), 0, 0, buffers).length, 0)
  })
})
