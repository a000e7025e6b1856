/**
 * The influence leaderboard's PageRank copies a bank's graph in slices, so the brain may take in writes between them
 * (the copy held the event loop for 150 ms at 100k memories in one piece). Memories appended while it copies, with
 * links from the memories it is copying, change nothing it computes: every memory it started with gets the rank of a
 * copy made with no write in between, and the newcomers rank 0 until the next computation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { GraphSnapshot } from "../../src/brain/graph/GraphSnapshot.ts"
import { LiveGraph } from "../../src/brain/graph/LiveGraph.ts"
import { pageRank } from "../../src/influence/GraphCentrality.ts"
import { seededRandom } from "../support/ClusteredVectors.ts"

const nodes = 12_000

const bank = () => {
  const random = seededRandom(5)
  const nodeIds = Array.from({ length: nodes }, (_, n) => `m${n}`)
  const links = nodeIds.flatMap((id, n) => [
    { fromId: id, toId: nodeIds[(n + 1) % nodes]!, linkType: "temporal", weight: 0.5 },
    { fromId: id, toId: nodeIds[Math.floor(random() * nodes)]!, linkType: "semantic", weight: 0.6 + random() * 0.4 },
    { fromId: id, toId: nodeIds[Math.floor(random() * 40)]!, linkType: "entity", weight: 1 }
  ])
  return LiveGraph.of(GraphSnapshot.build({ nodeIds, links }))
}

describe("graph centrality", () => {
  it.effect("memories appended during the sliced copy leave the ranks of the others as a quiet copy gives them", () =>
    Effect.gen(function*() {
      const quiet = yield* pageRank(bank())
      const graph = bank()
      const ranking = yield* Effect.forkChild(pageRank(graph))
      let appended = 0
      // The copy begins (and takes the graph's size) before the first write.
      yield* Effect.yieldNow
      while (ranking.pollUnsafe() === undefined) {
        const id = `new${appended++}`
        graph.appendNodes([id])
        // Strong links from old memories to the newcomer: merged ahead of weaker old edges in those memories' lists.
        graph.addLinks([0, 4_097, 8_500, appended * 37 % nodes].map((n) => ({
          fromId: `m${n}`,
          toId: id,
          linkType: "semantic",
          weight: 0.99
        })))
        yield* Effect.yieldNow
      }
      const busy = yield* Fiber.join(ranking)
      assert.isAbove(appended, 2, "writes landed between the copy's slices")
      for (let n = 0; n < nodes; n++) assert.strictEqual(busy.of(`m${n}`), quiet.of(`m${n}`), `m${n}`)
      assert.strictEqual(busy.of("new0"), 0)
      assert.deepStrictEqual(busy.top(10), quiet.top(10))
    }))
})
