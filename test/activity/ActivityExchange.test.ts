/**
 * Activity passed between engrams on its own: the `.brain` activity section round-trips a bank's own counts and
 * refuses what it cannot read (other format, newer version, wrong counts); a remote histogram turns back into
 * counts; learned counts never outweigh the bank's own more than 1:1 (a day's worth for a bank with fewer).
 */
import { assert, describe, it } from "@effect/vitest"
import {
  ActivityExchangeError,
  combine,
  countsFromHistogram,
  decodeActivitySection,
  encodeActivitySection,
  type LearnedActivity
} from "../../src/activity/ActivityExchange.ts"
import {
  type ActivityState,
  emptyCounts,
  initialHmm,
  initialKalman,
  kalmanStep
} from "../../src/activity/ActivityModel.ts"

const stateWith = (counts: Array<number>): ActivityState => ({
  counts,
  sampleCount: counts.reduce((sum, n) => sum + n, 0),
  kalman: kalmanStep(initialKalman(), counts),
  hmm: initialHmm()
})

const at = (hour: number, n: number) => {
  const counts = emptyCounts()
  counts[hour] = n
  return counts
}

const learned = (counts: Array<number>): LearnedActivity => ({
  counts,
  events: counts.reduce((sum, n) => sum + n, 0),
  via: "brain_file",
  merged_at: "2026-01-01T00:00:00.000Z"
})

const encode = (document: unknown) => new TextEncoder().encode(JSON.stringify(document))

describe("activity exchange", () => {
  it("the activity section round-trips the bank's own counts and refuses what it cannot read", () => {
    const counts = at(5, 7)
    assert.deepStrictEqual(decodeActivitySection(encodeActivitySection(stateWith(counts), "histogram")), counts)
    const refusals: Array<[Uint8Array, RegExp]> = [
      [Uint8Array.from([1, 2, 3]), /not UTF-8 JSON|not an object/],
      [encode({ format: "other", version: 1, counts }), /unknown format/],
      [encode({ format: "engram-activity", version: 2, counts }), /version 2 is not supported/],
      [encode({ format: "engram-activity", version: 1, counts: counts.slice(1) }), /24 hour counts/],
      [encode({ format: "engram-activity", version: 1, counts: at(3, -1) }), /non-negative/]
    ]
    for (const [bytes, reason] of refusals) {
      assert.throws(() => decodeActivitySection(bytes), ActivityExchangeError)
      assert.throws(() => decodeActivitySection(bytes), reason)
    }
  })

  it("a remote histogram gives back the counts its shares stand for", () => {
    const histogram = emptyCounts().map((_, hour) => ({
      hour_utc: hour,
      score: hour === 4 ? 0.75 : hour === 9 ? 0.25 : 0
    }))
    const counts = countsFromHistogram({ sample_count: 8, histogram })
    assert.strictEqual(counts[4], 6)
    assert.strictEqual(counts[9], 2)
    assert.throws(() => countsFromHistogram({ histogram }), /sample_count/)
    assert.throws(
      () => countsFromHistogram({ sample_count: 8, histogram: [{ hour_utc: 30, score: 1 }] }),
      /invalid point/
    )
  })

  it("learned counts weigh at most as much as the bank's own, and a day's worth in a bank with fewer", () => {
    const own = stateWith(at(8, 100))
    const alone = combine("histogram", own, {})
    assert.strictEqual(alone.shares[8], 1)
    assert.strictEqual(alone.learnedWeight, 0)

    // 1000 remote events against 100 own: scaled to 100, an even split.
    const capped = combine("histogram", own, { "a/x": learned(at(20, 1000)) })
    assert.strictEqual(capped.learnedWeight, 100)
    assert.strictEqual(capped.sampleCount, 200)
    assert.closeTo(capped.shares[8]!, 0.5, 1e-9)
    assert.closeTo(capped.shares[20]!, 0.5, 1e-9)

    // Fewer remote events than own: taken as they are.
    const small = combine("histogram", own, { "a/x": learned(at(20, 25)) })
    assert.strictEqual(small.learnedWeight, 25)
    assert.closeTo(small.shares[20]!, 25 / 125, 1e-9)

    // A bank without events of its own learns a day's worth; two sources share the cap.
    const empty = combine("kalman_lite", stateWith(emptyCounts()), {
      "a/x": learned(at(2, 60)),
      "b/y": learned(at(3, 60))
    })
    assert.strictEqual(empty.learnedWeight, 24)
    assert.strictEqual(empty.sampleCount, 24)
    assert.closeTo(empty.shares[2]!, 0.5, 1e-9)
    assert.closeTo(empty.shares[3]!, 0.5, 1e-9)
  })
})
