/** What counts as the same fact for deduplication. */
import { assert, describe, it } from "@effect/vitest"
import { contentHash, sameNumbers, wordJaccard } from "../../../src/memory/retain/ContentHash.ts"

describe("content identity", () => {
  it("ignores case, punctuation, spacing and appended date notes", () => {
    assert.strictEqual(contentHash("Lunch is at noon."), contentHash("  lunch IS at   noon "))
    assert.strictEqual(contentHash("I went yesterday [yesterday: 7 May 2023]"), contentHash("I went yesterday"))
    assert.notStrictEqual(contentHash("Lunch is at noon."), contentHash("Lunch is at one."))
  })
  it("never treats statements with different numbers as the same", () => {
    assert.isFalse(sameNumbers("Sensor 4 measured 20 degrees.", "Sensor 4 measured 21 degrees."))
    assert.isTrue(sameNumbers("Room 4: 20 degrees", "20 degrees in room 4"))
    assert.isAbove(wordJaccard("the cat sat on the mat", "The cat sat on the mat!"), 0.99)
  })
})
