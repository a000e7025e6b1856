/** Remembered ISO texts are the ones `toISOString` gives, also once the memory has been emptied; invalid dates throw. */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { isoOrNull } from "../../src/domain/IsoTime.ts"

describe("isoOrNull", () => {
  it("writes every instant as toISOString does, again and again, past the bound of what it remembers", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -8.64e15, max: 8.64e15 }), { minLength: 1, maxLength: 30_000 }),
        (instants) => {
          for (const instant of [...instants, ...instants]) {
            assert.strictEqual(isoOrNull(new Date(instant)), new Date(instant).toISOString())
          }
        }
      ),
      { numRuns: 5 }
    )
    assert.isNull(isoOrNull(null))
    assert.throws(() => isoOrNull(new Date(Number.NaN)), RangeError)
  })
})
