/**
 * The live graph (base snapshot + delta + tombstones) against a snapshot freshly built from the same live nodes
 * and links: after any sequence of appends, removals, links between old memories and compactions, spreading
 * activation and conversation neighbours must give exactly the same answers, ties and fan-out cuts included.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { LinkRow } from "../../../src/brain/graph/GraphSnapshot.ts"
import { GraphSnapshot, linkTypes } from "../../../src/brain/graph/GraphSnapshot.ts"
import { LiveGraph } from "../../../src/brain/graph/LiveGraph.ts"
import type { SpreadOptions } from "../../../src/brain/graph/SpreadingActivation.ts"
import { spread } from "../../../src/brain/graph/SpreadingActivation.ts"
import { stepsOf } from "../../support/SlicedSteps.ts"

/** Few distinct weights, so ties in adjacency order and in activation are common. */
const weights = [1, 0.5, 0.5, 0.25, 0.8, 0.125]

type Operation =
  | {
    readonly kind: "append"
    readonly count: number
    readonly links: ReadonlyArray<readonly [number, number, number, number]>
  }
  | { readonly kind: "remove"; readonly pick: number }
  | {
    readonly kind: "link-old"
    readonly a: number
    readonly b: number
    readonly type: number
    readonly weight: number
  }
  | { readonly kind: "compact" }
  | {
    readonly kind: "relink"
    readonly pick: number
    readonly links: ReadonlyArray<readonly [number, number, number]>
  }

const linkTuple = fc.tuple(
  fc.nat(),
  fc.nat(),
  fc.nat({ max: linkTypes.length - 1 }),
  fc.nat({ max: weights.length - 1 })
)
const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("append" as const),
      count: fc.integer({ min: 1, max: 6 }),
      links: fc.array(linkTuple, { maxLength: 24 })
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("link-old" as const),
      a: fc.nat(),
      b: fc.nat(),
      type: fc.nat({ max: linkTypes.length - 1 }),
      weight: fc.nat({ max: weights.length - 1 })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("compact" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("relink" as const),
      pick: fc.nat(),
      links: fc.array(
        fc.tuple(fc.nat(), fc.nat({ max: linkTypes.length - 1 }), fc.nat({ max: weights.length - 1 })),
        { maxLength: 8 }
      )
    })
  }
)

const options: SpreadOptions = {
  hops: 3,
  decay: 0.7,
  fanOut: 3,
  threshold: 0.01,
  typeWeights: { temporal: 0.9, semantic: 0.6, entity: 0.5, causes: 1 }
}

/** What the fresh build would see: live ids in retain order and every link whose two ends are live. */
interface Truth {
  readonly ids: Array<string>
  readonly removed: Set<string>
  readonly links: Array<LinkRow>
}

const liveIds = (truth: Truth) => truth.ids.filter((id) => !truth.removed.has(id))

const apply = (truth: Truth, graph: { current: LiveGraph }, op: Operation, next: { id: number }) => {
  const live = liveIds(truth)
  switch (op.kind) {
    case "append": {
      const added = Array.from({ length: op.count }, () => `m${next.id++}`)
      truth.ids.push(...added)
      const candidates = [...live, ...added]
      // Every link has a new memory at one end, as retain writes them.
      const links = op.links.map(([a, b, type, weight]): LinkRow => ({
        fromId: added[a % added.length]!,
        toId: candidates[b % candidates.length]!,
        linkType: linkTypes[type]!,
        weight: weights[weight]!
      }))
      truth.links.push(...links)
      graph.current.appendNodes(added)
      graph.current.addLinks(links)
      break
    }
    case "remove": {
      if (live.length === 0) return
      const id = live[op.pick % live.length]!
      truth.removed.add(id)
      graph.current.remove(id)
      break
    }
    case "link-old": {
      if (live.length < 2) return
      const link = {
        fromId: live[op.a % live.length]!,
        toId: live[op.b % live.length]!,
        linkType: linkTypes[op.type]!,
        weight: weights[op.weight]!
      }
      truth.links.push(link)
      graph.current.addLinks([link])
      break
    }
    case "compact":
      graph.current = graph.current.compacted()
      break
    case "relink": {
      // A curated memory: its links are derived anew (old ones deleted, new ones to any live memory written), and
      // the brain reads all of its links again.
      if (live.length === 0) return
      const id = live[op.pick % live.length]!
      const kept = truth.links.filter((link) => link.fromId !== id && link.toId !== id)
      const fresh = op.links.map(([b, type, weight]): LinkRow => ({
        fromId: id,
        toId: live[b % live.length]!,
        linkType: linkTypes[type]!,
        weight: weights[weight]!
      }))
      truth.links.length = 0
      truth.links.push(...kept, ...fresh)
      const current = truth.links.filter((link) =>
        (link.fromId === id || link.toId === id) && !truth.removed.has(link.fromId) && !truth.removed.has(link.toId)
      )
      graph.current.detach([id])
      graph.current.addLinks(current)
      break
    }
  }
  // `BankBrains` compacts at once when a link repeats a base edge more strongly (the delta cannot express it).
  if (graph.current.needsCompaction) graph.current = graph.current.compacted()
}

const answers = (
  graph: GraphSnapshot | LiveGraph,
  ids: ReadonlyArray<string>,
  indexOf: (id: string) => number,
  idAt: (i: number) => string
) => {
  const seeds = ids.map((id, k) => ({ index: indexOf(id), activation: 1 - k * 0.2 }))
  const result = spread(graph, seeds, options)
  return {
    reached: Array.from(result.indices, (index, k) => ({
      id: idAt(index),
      activation: result.activations[k],
      hops: result.hops[k],
      parent: result.parents[k]! < 0 ? null : idAt(result.parents[k]!)
    })),
    // The work done is the same too: the live graph skips what a fresh build would not hold, and nothing more.
    edgesRelaxed: result.edgesRelaxed,
    nodesReached: result.nodesReached
  }
}

describe("LiveGraph", () => {
  it("answers exactly as a fresh build of the live memories and links, after any sequence of writes", () => {
    fc.assert(
      fc.property(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
        (ops, seedPicks) => {
          const truth: Truth = { ids: [], removed: new Set(), links: [] }
          const next = { id: 0 }
          const graph = { current: LiveGraph.of(GraphSnapshot.build({ nodeIds: [], links: [] })) }
          for (const op of ops) apply(truth, graph, op, next)
          const live = liveIds(truth)
          const fresh = GraphSnapshot.build({
            nodeIds: live,
            links: truth.links.filter((link) => !truth.removed.has(link.fromId) && !truth.removed.has(link.toId))
          })
          const g = graph.current
          assert.strictEqual(g.liveNodeCount, live.length)
          for (const id of live) {
            for (const step of [1, -1] as const) {
              const mine = g.adjacentInOrder(g.indexOf.get(id)!, step)
              const theirs = fresh.adjacentInOrder(fresh.indexOf.get(id)!, step)
              assert.strictEqual(
                mine < 0 ? null : g.ids[mine],
                theirs < 0 ? null : fresh.ids[theirs],
                `${id} step ${step}`
              )
            }
          }
          if (live.length === 0) return
          const seeds = [...new Set(seedPicks.map((pick) => live[pick % live.length]!))]
          assert.deepStrictEqual(
            answers(g, seeds, (id) => g.indexOf.get(id)!, (i) => g.ids[i]!),
            answers(fresh, seeds, (id) => fresh.indexOf.get(id)!, (i) => fresh.ids[i]!)
          )
        }
      ),
      { numRuns: 400 }
    )
  })

  it("reads through the base arrays until something changes", () => {
    const base = GraphSnapshot.build({
      nodeIds: ["a", "b"],
      links: [{ fromId: "a", toId: "b", linkType: "temporal", weight: 1 }]
    })
    const graph = LiveGraph.of(base)
    assert.isTrue(graph.isBase)
    graph.appendNodes(["c"])
    graph.addLinks([{ fromId: "c", toId: "b", linkType: "semantic", weight: 0.7 }])
    assert.isFalse(graph.isBase)
    assert.strictEqual(graph.deltaEdges, 2)
    const compacted = graph.compacted()
    assert.isTrue(compacted.isBase)
    assert.strictEqual(compacted.base.edgeCount, 4)
  })

  it("is made from a big snapshot in slices, and what it takes in never reaches the snapshot it shares", () => {
    const nodeIds = Array.from({ length: 50_000 }, (_, n) => `m${n}`)
    const links = nodeIds.map((id, n) => ({
      fromId: id,
      toId: nodeIds[(n * 7 + 1) % 50_000]!,
      linkType: "semantic",
      weight: 0.7
    }))
    const base = GraphSnapshot.build({ nodeIds, links })
    const { pauses, value } = stepsOf(LiveGraph.ofSliced(base))
    assert.isAbove(pauses, 3, "it yields between slices")
    const live = value
    live.appendNodes(["fresh"])
    live.remove("m0")
    assert.strictEqual(live.indexOf.get("fresh"), 50_000)
    assert.isFalse(live.indexOf.has("m0"))
    assert.strictEqual(base.ids.length, 50_000, "the snapshot's ids are its own")
    assert.strictEqual(base.indexOf.get("m0"), 0, "the snapshot's index is its own")
    assert.isFalse(base.indexOf.has("fresh"))
    const compacted = live.compacted()
    compacted.appendNodes(["later"])
    assert.isFalse(compacted.base.indexOf.has("later"), "a compacted graph's snapshot is not changed by later writes")
    assert.strictEqual(compacted.base.ids.length, 50_000)
  })
})
