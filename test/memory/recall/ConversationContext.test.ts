/**
 * Conversation context: the turns right after (and, less, before) the best candidates gain a share of their
 * score, found through temporal links between memories adjacent in retain order.
 */
import { assert, describe, it } from "@effect/vitest"
import { withConversationContext } from "../../../src/memory/recall/ConversationContext.ts"
import type { Fused } from "../../../src/memory/recall/Fusion.ts"
import { byCombinedScore } from "../../../src/memory/recall/Fusion.ts"
import { GraphSnapshot } from "../../../src/brain/graph/GraphSnapshot.ts"

const fused = (id: string, combined: number): Fused => ({
  id,
  rrf: combined / 100,
  combined,
  ranks: { keyword: 1 },
  scores: { keyword: combined }
})

describe("adjacentInOrder", () => {
  it("finds the previous and next memory only when a temporal link joins them", () => {
    const snapshot = GraphSnapshot.build({
      nodeIds: ["q", "a", "x", "y"],
      links: [
        { fromId: "a", toId: "q", linkType: "temporal", weight: 1 },
        { fromId: "x", toId: "a", linkType: "semantic", weight: 1 },
        { fromId: "y", toId: "q", linkType: "temporal", weight: 1 }
      ]
    })
    const at = (id: string) => snapshot.indexOf.get(id)!
    assert.strictEqual(snapshot.adjacentInOrder(at("q"), 1), at("a"))
    assert.strictEqual(snapshot.adjacentInOrder(at("a"), -1), at("q"))
    // Linked, but not by time: not a neighbouring turn.
    assert.strictEqual(snapshot.adjacentInOrder(at("a"), 1), -1)
    // Linked by time, but not adjacent in retain order.
    assert.strictEqual(snapshot.adjacentInOrder(at("y"), -1), -1)
    assert.strictEqual(snapshot.adjacentInOrder(at("q"), -1), -1)
    assert.strictEqual(snapshot.adjacentInOrder(at("y"), 1), -1)
  })
})

describe("withConversationContext", () => {
  const options = { sources: 2, nextShare: 0.5, previousShare: 0.25 }

  it("lifts the reply to a matching question above weaker matches, and adds turns not found by any strategy", () => {
    const candidates = [fused("question", 1), fused("other", 0.6), fused("weak", 0.3), fused("reply", 0.2)]
    const adjacent = new Map([
      ["question", { previous: "before", next: "reply" }],
      ["other", { previous: undefined, next: undefined }]
    ])
    const ranked = byCombinedScore(withConversationContext(candidates, adjacent, options))
    assert.deepStrictEqual(ranked.map((c) => c.id), ["question", "reply", "other", "weak", "before"])
    assert.closeTo(ranked.find((c) => c.id === "reply")!.combined, 0.7, 1e-9)
    const before = ranked.find((c) => c.id === "before")!
    assert.closeTo(before.combined, 0.25, 1e-9)
    assert.deepStrictEqual(before.ranks, {})
  })

  it("only the best `sources` candidates give, and the input is left as it was", () => {
    const candidates = [fused("a", 1), fused("b", 0.9), fused("c", 0.8)]
    const adjacent = new Map([["c", { previous: undefined, next: "d" }]])
    const result = withConversationContext(candidates, adjacent, options)
    assert.deepStrictEqual(result.map((c) => c.id), ["a", "b", "c"])
    assert.strictEqual(candidates[2]!.combined, 0.8)
  })
})
