/**
 * The telemetry buffer hands out exactly what the old whole-buffer walk did: the oldest rows recorded up to a point,
 * of every bank or of one, at most a slice, with the rest left in recording order — whatever mix of reads and
 * takes comes, and across the moments its front is dropped (more than 1,024 rows taken from the front).
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { AccessBuffer } from "../../src/activity/AccessBuffer.ts"

interface Row {
  readonly order: number
  readonly bank_id: string
}

type Step =
  | { readonly kind: "push"; readonly bank: string; readonly count: number }
  | { readonly kind: "take"; readonly bank: string | undefined; readonly most: number; readonly back: number }

/** The walk AccessTelemetry did before: every row looked at, the kept ones copied into a new array. */
const walkTake = (rows: Array<Row>, bank: string | undefined, most: number, upTo: number) => {
  const taken: Array<Row> = []
  const kept: Array<Row> = []
  for (const row of rows) {
    if (taken.length < most && row.order <= upTo && (bank === undefined || row.bank_id === bank)) taken.push(row)
    else kept.push(row)
  }
  return { taken, kept }
}

const bank = fc.constantFrom("a", "b", "c")
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("push" as const), bank, count: fc.integer({ min: 1, max: 700 }) }),
  fc.record({
    kind: fc.constant("take" as const),
    bank: fc.option(bank, { nil: undefined, freq: 3 }),
    most: fc.integer({ min: 1, max: 600 }),
    back: fc.integer({ min: 0, max: 50 })
  })
)

describe("AccessBuffer", () => {
  it("takes what a walk of the whole buffer takes, and keeps the rest in order", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const buffer = new AccessBuffer<Row>((row) => row.order)
        let model: Array<Row> = []
        let recorded = 0
        for (const next of steps) {
          if (next.kind === "push") {
            for (let n = 0; n < next.count; n++) {
              const row = { order: ++recorded, bank_id: next.bank }
              buffer.push(row)
              model.push(row)
            }
          } else {
            // `back` leaves the latest rows out, as a take up to a moment before reads recorded meanwhile does.
            const upTo = recorded - next.back
            const expected = walkTake(model, next.bank, next.most, upTo)
            const taken = next.bank === undefined
              ? buffer.takeOldest(next.most, upTo)
              : buffer.takeOldestOf(next.bank, next.most, upTo)
            assert.deepStrictEqual(taken, expected.taken)
            model = expected.kept
          }
          assert.strictEqual(buffer.size, model.length)
        }
        assert.deepStrictEqual(buffer.takeOldest(Number.POSITIVE_INFINITY, recorded), model)
        assert.strictEqual(buffer.size, 0)
      }),
      { numRuns: 200 }
    )
  })
})
