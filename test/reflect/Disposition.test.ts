/** Every disposition level gives the model a different, concrete instruction; the extremes say opposite things. */
import { assert, describe, it } from "@effect/vitest"
import { dispositionInstructions } from "../../src/reflect/Disposition.ts"

describe("disposition instructions", () => {
  it("each level of each trait reads differently", () => {
    for (const trait of [0, 1, 2]) {
      const lines = [1, 2, 3, 4, 5].map((level) =>
        dispositionInstructions({ skepticism: level, literalism: level, empathy: level })[trait]!
      )
      assert.strictEqual(new Set(lines).size, 5)
      lines.forEach((line, index) => assert.include(line, `${index + 1}/5`))
    }
  })

  it("the extremes ask for opposite behaviour", () => {
    const [trusting, flexible, detached] = dispositionInstructions({ skepticism: 1, literalism: 1, empathy: 1 })
    const [skeptical, literal, empathetic] = dispositionInstructions({ skepticism: 5, literalism: 5, empathy: 5 })
    assert.include(trusting, "face value")
    assert.include(skeptical, "at least two memories agree")
    assert.include(flexible, "inferences")
    assert.include(literal, "make no inferences")
    assert.include(detached, "without emotional framing")
    assert.include(empathetic, "acknowledge their feelings")
  })
})
