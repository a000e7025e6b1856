/** Time expressions resolved into windows: a month with its year is that month of that year, not the next one. */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { describeWindow, resolveTimes } from "../../../src/memory/retain/TimeExpressions.ts"

const reference = new Date("2026-11-27T12:00:00Z")
const window = (text: string) => {
  const found = resolveTimes(text, reference)[0]
  return found === undefined
    ? undefined
    : [found.start.toISOString().slice(0, 10), found.end.toISOString().slice(0, 10), found.precision]
}

describe("time expressions", () => {
  it("a named month takes the year written after it", () => {
    assert.deepStrictEqual(window("Where did Alice work in January 2023?"), ["2023-01-01", "2023-01-31", "month"])
    assert.deepStrictEqual(window("We met in March, 2021 at the lake."), ["2021-03-01", "2021-03-31", "month"])
    assert.deepStrictEqual(window("Back last May 2019 it rained."), ["2019-05-01", "2019-05-31", "month"])
  })

  it("a month alone is the next one; last and this are relative to when it was said", () => {
    assert.deepStrictEqual(window("The trip is in January."), ["2027-01-01", "2027-01-31", "month"])
    assert.deepStrictEqual(window("It snowed last January."), ["2026-01-01", "2026-01-31", "month"])
    assert.deepStrictEqual(window("In 2019 they moved."), ["2019-01-01", "2019-12-31", "year"])
  })

  it("a month alone in a sentence about the past is the last one, also in a question", () => {
    assert.deepStrictEqual(window("Alice moved to Lisbon in March."), ["2026-03-01", "2026-03-31", "month"])
    assert.deepStrictEqual(window("Where did Alice work in January?"), ["2026-01-01", "2026-01-31", "month"])
    assert.deepStrictEqual(window("We met in November at the lake."), ["2026-11-01", "2026-11-30", "month"])
    assert.deepStrictEqual(window("Alice joined Globex in December."), ["2025-12-01", "2025-12-31", "month"])
    // What points ahead keeps the next one, past form or not.
    assert.deepStrictEqual(window("The trip is scheduled in March."), ["2027-03-01", "2027-03-31", "month"])
    assert.deepStrictEqual(window("We planned to go in February."), ["2027-02-01", "2027-02-28", "month"])
  })

  it("describes a day and a month as en-GB's Intl formatter does, for every storable year", () => {
    const dayFormat = new Intl.DateTimeFormat("en-GB", {
      day: "numeric",
      month: "long",
      year: "numeric",
      timeZone: "UTC"
    })
    const monthFormat = new Intl.DateTimeFormat("en-GB", { month: "long", year: "numeric", timeZone: "UTC" })
    const storable = fc.date({
      min: new Date("0001-01-01T00:00:00Z"),
      max: new Date("9999-12-31T23:59:59.999Z"),
      noInvalidDate: true
    })
    fc.assert(
      fc.property(storable, (start) => {
        const window = (precision: "day" | "month" | "year") => ({ expression: "", start, end: start, precision })
        assert.strictEqual(describeWindow(window("day")), dayFormat.format(start))
        assert.strictEqual(describeWindow(window("month")), monthFormat.format(start))
        assert.strictEqual(describeWindow(window("year")), String(start.getUTCFullYear()))
      }),
      { numRuns: 2000 }
    )
  })
})
