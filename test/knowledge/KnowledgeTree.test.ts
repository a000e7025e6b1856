/**
 * The knowledge base's pure tree rules: a subtree includes everything below a node, a move into one's own subtree
 * is a cycle, and nesting never hides a node — not one whose parent is gone, nor the members of a cycle a bad
 * restore could leave.
 */
import { assert, describe, it } from "@effect/vitest"
import { nest, type Nested, subtreeOf, wouldCycle } from "../../src/knowledge/KnowledgeTree.ts"

const entry = (id: string, parentId: string | null = null) => ({ id, parentId })
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1)
const shape = (forest: ReadonlyArray<Nested<{ id: string }>>): Array<unknown> =>
  forest.map((node) => node.children.length === 0 ? node.entry.id : [node.entry.id, shape(node.children)])

describe("KnowledgeTree", () => {
  const tree = [entry("a"), entry("b", "a"), entry("c", "b"), entry("d", "a"), entry("e")]

  it("a subtree is the node and everything below it", () => {
    assert.sameMembers([...subtreeOf(tree, "a")], ["a", "b", "c", "d"])
    assert.deepStrictEqual([...subtreeOf(tree, "e")], ["e"])
  })

  it("moving a folder into itself or below itself is a cycle; elsewhere is not", () => {
    assert.isTrue(wouldCycle(tree, "a", "a"))
    assert.isTrue(wouldCycle(tree, "a", "c"))
    assert.isFalse(wouldCycle(tree, "b", "e"))
    assert.isFalse(wouldCycle(tree, "c", "a"))
  })

  it("nests by parent in order, and lifts orphans and cycle members to the root", () => {
    assert.deepStrictEqual(shape(nest(tree, byId)), [["a", [["b", ["c"]], "d"]], "e"])
    const broken = [entry("x", "gone"), entry("p", "q"), entry("q", "p")]
    const roots = nest(broken, byId)
    // The orphan first (its parent is missing), then one member of the cycle carrying the other.
    assert.deepStrictEqual(shape(roots), ["x", ["p", ["q"]]])
    assert.sameMembers([...subtreeOf(broken, "p")], ["p", "q"], "a cycle does not loop forever")
  })
})
