/** The reflect bounds: more budget means more searches, context and time; the phases always leave the answer time. */
import { assert, describe, it } from "@effect/vitest"
import { reflectBounds } from "../../src/reflect/BudgetPolicy.ts"

describe("reflect budget policy", () => {
  it("grows searches, evidence tokens and wall time with the budget", () => {
    const [low, mid, high] = (["low", "mid", "high"] as const).map((budget) =>
      reflectBounds({ budget, maxTokens: 4096, baseWallMs: 60_000, structured: false })
    )
    assert.isBelow(low!.searchTurns, mid!.searchTurns)
    assert.isBelow(mid!.searchTurns, high!.searchTurns)
    assert.isBelow(low!.contextTokens, mid!.contextTokens)
    assert.isBelow(mid!.contextTokens, high!.contextTokens)
    assert.deepStrictEqual([low!.wallMs, mid!.wallMs, high!.wallMs], [60_000, 120_000, 240_000])
  })

  it("stops gathering at half the wall time and keeps the last fifth for structured output", () => {
    const plain = reflectBounds({ budget: "low", maxTokens: 512, baseWallMs: 10_000, structured: false })
    assert.strictEqual(plain.gatherUntilMs, 5_000)
    assert.strictEqual(plain.answerUntilMs, 10_000)
    assert.strictEqual(plain.answerTokens, 512)
    const structured = reflectBounds({ budget: "low", maxTokens: 512, baseWallMs: 10_000, structured: true })
    assert.strictEqual(structured.answerUntilMs, 8_000)
  })
})
