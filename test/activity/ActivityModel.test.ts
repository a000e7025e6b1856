/**
 * The activity and influence math on its own: Kalman steps, the HMM fit, predictions over a horizon, the trend's
 * EWMA, band and anomalies, and PageRank on a small graph (the hub of a star is the most central; removed
 * memories take no rank; other fibers run between its rounds).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as fc from "fast-check"
import {
  type ActivityState,
  distribution,
  emptyCounts,
  fitHmm,
  type HmmState,
  initialHmm,
  initialKalman,
  kalmanStep,
  predict
} from "../../src/activity/ActivityModel.ts"
import { pageRank } from "../../src/influence/GraphCentrality.ts"
import { anomalies, bands, ewma } from "../../src/influence/InfluenceSeries.ts"
import { GraphSnapshot } from "../../src/brain/graph/GraphSnapshot.ts"
import { LiveGraph } from "../../src/brain/graph/LiveGraph.ts"

const countsAt = (entries: Record<number, number>) => emptyCounts().map((_, hour) => entries[hour] ?? 0)

const stateOf = (counts: ReadonlyArray<number>, hours: ReadonlyArray<number>): ActivityState => ({
  counts,
  sampleCount: counts.reduce((a, b) => a + b, 0),
  kalman: kalmanStep(initialKalman(), counts),
  hmm: fitHmm(initialHmm(), hours)
})

describe("activity model", () => {
  it("a Kalman step moves each hour toward its measured share, less so once the filter is confident", () => {
    const counts = countsAt({ 9: 3, 21: 1 })
    const first = kalmanStep(initialKalman(), counts)
    const gain = 1.01 / (1.01 + 0.05)
    assert.closeTo(first.state[9]!, gain * 0.75, 1e-12)
    assert.closeTo(first.variance[9]!, (1 - gain) * 1.01, 1e-12)
    // The bank's habits change: all activity at 21. The smoothed share at 9 decays over steps, not at once.
    const shifted = countsAt({ 21: 4 })
    const second = kalmanStep(first, shifted)
    assert.isAbove(second.state[9]!, 0)
    assert.isBelow(second.state[9]!, first.state[9]!)
    const shares = distribution("kalman_lite", { ...stateOf(shifted, []), kalman: second })
    assert.isAbove(shares[9]!, 0, "the earlier habit still weighs")
    assert.isAbove(shares[21]!, shares[9]!)
    assert.closeTo(shares.reduce((a, b) => a + b, 0), 1, 1e-9)
  })

  it("the HMM fit concentrates emission on the hours observed and stays a distribution", () => {
    const hours = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 14 : 15))
    const fitted = fitHmm(initialHmm(), hours)
    for (const row of [...fitted.transition, ...fitted.emission, fitted.initial]) {
      assert.closeTo(row.reduce((a, b) => a + b, 0), 1, 1e-9)
    }
    const shares = distribution("hmm_lite", stateOf(countsAt({ 14: 20, 15: 40 }), hours))
    assert.isAbove(shares[14]! + shares[15]!, 0.99)
    assert.isAbove(shares[15]!, shares[14]!)
    assert.deepStrictEqual(fitHmm(initialHmm(), [3]), initialHmm(), "one observation leaves the prior")
  })

  it("the HMM fit is, to the bit, the straightforward Baum–Welch it replaced", () => {
    const hour = fc.integer({ min: 0, max: 23 })
    fc.assert(
      fc.property(
        fc.array(hour, { minLength: 0, maxLength: 300 }),
        fc.array(hour, { maxLength: 40 }),
        (hours, more) => {
          const once = fitHmm(initialHmm(), hours)
          assert.deepStrictEqual(once, referenceFitHmm(initialHmm(), hours))
          // From a fitted prior too, as a rebuild continues the stored model.
          assert.deepStrictEqual(fitHmm(once, [...hours, ...more]), referenceFitHmm(once, [...hours, ...more]))
        }
      ),
      { numRuns: 200, seed: 47 }
    )
  })

  it("no events: every variant is all zero", () => {
    const empty = stateOf(emptyCounts(), [])
    for (const mode of ["histogram", "kalman_lite", "hmm_lite"] as const) {
      assert.isTrue(distribution(mode, empty).every((share) => share === 0), mode)
    }
  })

  it("predictions list the hours of the horizon, each weighted by how often it comes in it", () => {
    const shares = distribution("histogram", stateOf(countsAt({ 9: 1, 10: 1, 22: 2 }), []))
    const now = new Date("2024-06-01T08:30:00Z")
    const one = predict(shares, 1, now)
    assert.deepStrictEqual(one.map((p) => [p.hour_utc, p.score, p.at]), [[9, 1, "2024-06-01T09:00:00.000Z"]])
    const three = predict(shares, 3, now)
    assert.deepStrictEqual(three.map((p) => [p.hour_utc, p.score]), [[9, 0.5], [10, 0.5], [11, 0]])
    const day = predict(shares, 24, now)
    assert.strictEqual(day.length, 24)
    assert.deepStrictEqual(day.slice(0, 3).map((p) => [p.hour_utc, p.score]), [[22, 0.5], [9, 0.25], [10, 0.25]])
    // 30 hours from 08:30: 09..14 come twice, so 9 and 10 outweigh their single-day share.
    const longer = predict(shares, 30, now)
    assert.strictEqual(longer.length, 24)
    assert.closeTo(longer.find((p) => p.hour_utc === 9)!.score, 2 / 6, 1e-6)
    assert.closeTo(longer.find((p) => p.hour_utc === 22)!.score, 2 / 6, 1e-6)
  })
})

describe("influence series", () => {
  it("EWMA with alpha 0.35, a band around the running mean, and anomalies by robust z and IQR", () => {
    const values = [0.2, 0.2, 0.2, 0.2, 1, 0.2, 0.2]
    const smoothed = ewma(values)
    assert.strictEqual(smoothed[0], 0.2)
    assert.closeTo(smoothed[4]!, 0.35 * 1 + 0.65 * 0.2, 1e-12)
    const band = bands(smoothed)
    assert.deepStrictEqual(band[0], { lower: 0.2, upper: 0.2 })
    for (const b of band) assert.isTrue(b.lower <= b.upper && b.lower >= 0 && b.upper <= 1)
    const found = anomalies(values)
    assert.deepStrictEqual(found.map((a) => [a.index, a.iqr]), [[4, true]])
    assert.isAbove(found[0]!.zscore, 3.5)
    assert.deepStrictEqual(anomalies([0.5, 0.5, 0.5]), [])
  })
})

describe("graph centrality", () => {
  const star = () => {
    const leaves = ["b", "c", "d", "e"]
    const base = GraphSnapshot.build({
      nodeIds: ["a", ...leaves, "f"],
      links: [
        ...leaves.map((leaf) => ({ fromId: "a", toId: leaf, linkType: "entity", weight: 1 })),
        { fromId: "e", toId: "f", linkType: "semantic", weight: 1 }
      ]
    })
    return LiveGraph.of(base)
  }

  it.effect("PageRank ranks the hub of a star first, scaled to 1; removed memories have none", () =>
    Effect.gen(function*() {
      const graph = star()
      const centrality = yield* pageRank(graph)
      assert.strictEqual(centrality.of("a"), 1)
      assert.strictEqual(centrality.top(2)[0], "a")
      assert.strictEqual(centrality.top(2)[1], "e", "the leaf with a second link")
      assert.isBelow(centrality.of("b"), centrality.of("e"))
      assert.strictEqual(centrality.of("zzz"), 0)
      graph.remove("a")
      const without = yield* pageRank(graph)
      assert.strictEqual(without.of("a"), 0)
      assert.isFalse(without.top(10).includes("a"))
    }))

  it.effect("PageRank lets other fibers run between its rounds (a 100k bank's ranking held the event loop 0.5 s)", () =>
    Effect.gen(function*() {
      let turns = 0
      const ticker = yield* Effect.forkChild(
        Effect.forever(Effect.andThen(Effect.sync(() => turns++), Effect.yieldNow))
      )
      yield* Effect.yieldNow
      const before = turns
      yield* pageRank(star())
      assert.isAtLeast(turns - before, 10, "the ranking ran its twenty rounds without a break")
      yield* Fiber.interrupt(ticker)
    }))
})

/** The first version of `fitHmm`, arrays of arrays allocated per observation: the reference for the typed-array one. */
const referenceFitHmm = (prior: HmmState, observations: ReadonlyArray<number>): HmmState => {
  const normalize = (values: ReadonlyArray<number>): Array<number> => {
    const total = values.reduce((sum, value) => sum + value, 0)
    return total > 0 ? values.map((value) => value / total) : values.map(() => 0)
  }
  const length = observations.length
  if (length < 2) return prior
  let transition = prior.transition.map((row) => [...row])
  let emission = prior.emission.map((row) => [...row])
  let initial = [...prior.initial]
  const alpha = Array.from({ length }, () => [0, 0])
  const beta = Array.from({ length }, () => [0, 0])
  const scale = new Array<number>(length).fill(0)
  for (let iteration = 0; iteration < 5; iteration++) {
    for (let t = 0; t < length; t++) {
      const symbol = observations[t]!
      let sum = 0
      for (let s = 0; s < 2; s++) {
        const into = t === 0
          ? initial[s]!
          : alpha[t - 1]![0]! * transition[0]![s]! + alpha[t - 1]![1]! * transition[1]![s]!
        alpha[t]![s] = into * emission[s]![symbol]!
        sum += alpha[t]![s]!
      }
      scale[t] = sum > 0 ? sum : 1e-300
      for (let s = 0; s < 2; s++) alpha[t]![s] = alpha[t]![s]! / scale[t]!
    }
    beta[length - 1] = [1, 1]
    for (let t = length - 2; t >= 0; t--) {
      const next = observations[t + 1]!
      for (let s = 0; s < 2; s++) {
        beta[t]![s] = (transition[s]![0]! * emission[0]![next]! * beta[t + 1]![0]! +
          transition[s]![1]! * emission[1]![next]! * beta[t + 1]![1]!) / scale[t + 1]!
      }
    }
    const gamma = alpha.map((a, t) => normalize([a[0]! * beta[t]![0]!, a[1]! * beta[t]![1]!]))
    const expected = [[0, 0], [0, 0]]
    for (let t = 0; t < length - 1; t++) {
      const next = observations[t + 1]!
      const xi = [[0, 0], [0, 0]]
      let total = 0
      for (let from = 0; from < 2; from++) {
        for (let to = 0; to < 2; to++) {
          xi[from]![to] = alpha[t]![from]! * transition[from]![to]! * emission[to]![next]! * beta[t + 1]![to]!
          total += xi[from]![to]!
        }
      }
      for (let from = 0; from < 2; from++) {
        for (let to = 0; to < 2; to++) expected[from]![to]! += total > 0 ? xi[from]![to]! / total : 0
      }
    }
    initial = gamma[0]!
    transition = expected.map((row, from) => {
      const normalized = normalize(row)
      return normalized[0]! + normalized[1]! > 0 ? normalized : [...transition[from]!]
    })
    emission = [0, 1].map((s) => {
      const row = emptyCounts().map(() => 1e-6)
      for (let t = 0; t < length; t++) row[observations[t]!]! += gamma[t]![s]!
      return normalize(row)
    })
  }
  return { transition, emission, initial }
}
