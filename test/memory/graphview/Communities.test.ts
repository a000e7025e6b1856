/** Label propagation groups densely linked nodes and keeps weakly joined groups apart, deterministically. */
import { assert, describe, it } from "@effect/vitest"
import { communities } from "../../../src/memory/graphview/Communities.ts"

const triangle = (a: string, b: string, c: string) => [
  { source: a, target: b, strength: 1 },
  { source: b, target: c, strength: 1 },
  { source: a, target: c, strength: 1 }
]

describe("communities", () => {
  it("two dense groups joined by one weak link stay two groups; a loner is its own", () => {
    const ids = ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "loner"]
    const edges = [
      ...triangle("a1", "a2", "a3"),
      { source: "a3", target: "a4", strength: 1 },
      { source: "a4", target: "a1", strength: 1 },
      ...triangle("b1", "b2", "b3"),
      { source: "a1", target: "b1", strength: 0.1 }
    ]
    const groups = communities(ids, edges)
    assert.strictEqual(groups.get("a1"), groups.get("a4"))
    assert.strictEqual(groups.get("b1"), groups.get("b3"))
    assert.notStrictEqual(groups.get("a1"), groups.get("b1"))
    // Numbered from the largest group down; the loner comes last.
    assert.strictEqual(groups.get("a2"), 0)
    assert.strictEqual(groups.get("b2"), 1)
    assert.strictEqual(groups.get("loner"), 2)
    assert.deepStrictEqual([...communities([...ids].reverse(), [...edges].reverse())], [...groups])
  })

  it("edges to unknown nodes and self-loops are ignored", () => {
    const groups = communities(["x", "y"], [{ source: "x", target: "zz", strength: 1 }, {
      source: "x",
      target: "x",
      strength: 5
    }])
    assert.notStrictEqual(groups.get("x"), groups.get("y"))
  })
})
