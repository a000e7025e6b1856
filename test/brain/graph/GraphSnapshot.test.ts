/** How a bank's links become the in-memory adjacency that spreading activation walks. */
import { assert, describe, it } from "@effect/vitest"
import type { LinkRow } from "../../../src/brain/graph/GraphSnapshot.ts"
import { GraphSnapshot, linkTypeCode } from "../../../src/brain/graph/GraphSnapshot.ts"

const nodeIds = ["a", "b", "c", "d", "e"]
const links: ReadonlyArray<LinkRow> = [
  { fromId: "a", toId: "b", linkType: "semantic", weight: 0.9 },
  { fromId: "c", toId: "a", linkType: "temporal", weight: 0.5 },
  { fromId: "a", toId: "d", linkType: "entity", weight: 1 },
  { fromId: "b", toId: "c", linkType: "causes", weight: 0.7 },
  { fromId: "a", toId: "b", linkType: "temporal", weight: 0.3 },
  // The same pair and type stored the other way round: merged, the stronger weight wins.
  { fromId: "b", toId: "a", linkType: "semantic", weight: 0.95 },
  { fromId: "a", toId: "a", linkType: "semantic", weight: 1 },
  { fromId: "a", toId: "unknown", linkType: "semantic", weight: 1 },
  { fromId: "d", toId: "e", linkType: "semantic", weight: 0 }
]

/** The adjacency list of a node as readable tuples, in stored order. */
const neighbours = (snapshot: GraphSnapshot, id: string) => {
  const u = snapshot.indexOf.get(id)!
  const result: Array<readonly [string, number, number]> = []
  for (let e = snapshot.offsets[u]!; e < snapshot.offsets[u + 1]!; e++) {
    const weight = Math.round(snapshot.weights[e]! * 1000) / 1000
    result.push([snapshot.ids[snapshot.targets[e]!]!, weight, snapshot.types[e]!])
  }
  return result
}

describe("GraphSnapshot", () => {
  it("lists every link from both ends, strongest first, one edge per pair and type", () => {
    const snapshot = GraphSnapshot.build({ nodeIds, links })
    assert.deepStrictEqual(neighbours(snapshot, "a"), [
      ["d", 1, linkTypeCode("entity")],
      ["b", 0.95, linkTypeCode("semantic")],
      ["c", 0.5, linkTypeCode("temporal")],
      ["b", 0.3, linkTypeCode("temporal")]
    ])
    assert.deepStrictEqual(neighbours(snapshot, "b"), [
      ["a", 0.95, linkTypeCode("semantic")],
      ["c", 0.7, linkTypeCode("causes")],
      ["a", 0.3, linkTypeCode("temporal")]
    ])
    assert.deepStrictEqual(neighbours(snapshot, "c"), [
      ["b", 0.7, linkTypeCode("causes")],
      ["a", 0.5, linkTypeCode("temporal")]
    ])
    assert.deepStrictEqual(neighbours(snapshot, "e"), [])
    assert.strictEqual(snapshot.nodeCount, 5)
    assert.strictEqual(snapshot.edgeCount, 10)
    assert.strictEqual(snapshot.offsets.length, 6)
    // The self-link, the link to an unknown memory and the zero-weight link.
    assert.strictEqual(snapshot.droppedLinks, 3)
  })

  it("scales weights by type factors and breaks weight ties by neighbour index", () => {
    const snapshot = GraphSnapshot.build({ nodeIds, links }, { typeFactors: { temporal: 2, causes: 0 } })
    assert.deepStrictEqual(neighbours(snapshot, "a").map(([id, weight]) => [id, weight]), [
      ["c", 1],
      ["d", 1],
      ["b", 0.95],
      ["b", 0.6]
    ])
    assert.deepStrictEqual(neighbours(snapshot, "c"), [["a", 1, linkTypeCode("temporal")]])
  })

  it("keeps link types it does not know as `other`", () => {
    const snapshot = GraphSnapshot.build({
      nodeIds: ["a", "b"],
      links: [{ fromId: "a", toId: "b", linkType: "supersedes", weight: 1 }]
    })
    assert.deepStrictEqual(neighbours(snapshot, "a"), [["b", 1, linkTypeCode("other")]])
  })

  it("builds the same arrays whatever the order of the links, by id or by position", () => {
    const reference = GraphSnapshot.build({ nodeIds, links })
    const shuffled = GraphSnapshot.build({ nodeIds, links: [...links].reverse() })
    const indexed = GraphSnapshot.build({
      nodeIds,
      indexedLinks: links.map((link) => ({
        from: nodeIds.indexOf(link.fromId),
        to: nodeIds.indexOf(link.toId),
        linkType: link.linkType,
        weight: link.weight
      }))
    })
    for (const other of [shuffled, indexed]) {
      assert.deepStrictEqual(other.offsets, reference.offsets)
      assert.deepStrictEqual(other.targets, reference.targets)
      assert.deepStrictEqual(other.weights, reference.weights)
      assert.deepStrictEqual(other.types, reference.types)
    }
    assert.strictEqual(indexed.droppedLinks, reference.droppedLinks)
  })

  it("orders long adjacency lists too", () => {
    const leaves = Array.from({ length: 200 }, (_, i) => `leaf-${i}`)
    const snapshot = GraphSnapshot.build({
      nodeIds: ["hub", ...leaves],
      links: leaves.map((leaf, i) => ({
        fromId: leaf,
        toId: "hub",
        linkType: "entity",
        weight: ((i * 37) % 100) / 100 + 0.01
      }))
    })
    const hub = neighbours(snapshot, "hub")
    assert.strictEqual(hub.length, 200)
    for (let i = 1; i < hub.length; i++) {
      const [previousId, previousWeight] = hub[i - 1]!
      const [id, weight] = hub[i]!
      const byIndex = snapshot.indexOf.get(previousId)! < snapshot.indexOf.get(id)!
      assert.isTrue(previousWeight > weight || (previousWeight === weight && byIndex), `${i}`)
    }
  })

  it("counts a repeated node id once, and rejects it when links refer to positions", () => {
    const snapshot = GraphSnapshot.build({ nodeIds: ["a", "b", "a"], links: [] })
    assert.deepStrictEqual(snapshot.ids, ["a", "b"])
    assert.throws(() => GraphSnapshot.build({ nodeIds: ["a", "b", "a"], indexedLinks: [] }), /listed twice/)
  })

  it("reports its size and build time", () => {
    const snapshot = GraphSnapshot.build({ nodeIds, links })
    assert.isAtLeast(snapshot.byteSize, 6 * 4 + 10 * 9)
    assert.isAtLeast(snapshot.buildMillis, 0)
    assert.strictEqual(snapshot.degree(snapshot.indexOf.get("a")!), 4)
  })
})
