/** Opinion confidence: support moves it up a little, contradiction down more; offline, only restatements count. */
import { assert, describe, it } from "@effect/vitest"
import { adjustConfidence, offlineStance } from "../../../src/reflect/opinions/ReinforceOpinion.ts"

const fact = (text: string, similarity: number) => ({ id: "f", text, seq: 1, similarity })

describe("opinion reinforcement", () => {
  it("support raises confidence, contradiction lowers it more, and it stays within (0, 1)", () => {
    assert.closeTo(adjustConfidence(0.5, ["supports"]), 0.55, 1e-9)
    assert.closeTo(adjustConfidence(0.5, ["contradicts"]), 0.4, 1e-9)
    assert.closeTo(adjustConfidence(0.5, ["unrelated"]), 0.5, 1e-9)
    assert.isBelow(adjustConfidence(0.98, Array(50).fill("supports")), 1)
    assert.isAbove(adjustConfidence(0.05, Array(50).fill("contradicts")), 0)
  })

  it("offline, a close restatement supports unless exactly one side is negated", () => {
    assert.strictEqual(offlineStance("Sam is reliable.", fact("Sam is reliable at work.", 0.9)), "supports")
    assert.strictEqual(offlineStance("Sam is reliable.", fact("Sam is not reliable at work.", 0.9)), "contradicts")
    assert.strictEqual(offlineStance("Sam isn't reliable.", fact("Sam is not reliable.", 0.9)), "supports")
    assert.strictEqual(offlineStance("Sam is reliable.", fact("Sam likes tea.", 0.5)), "unrelated")
  })
})
