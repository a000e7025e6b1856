/**
 * PageRank over the bank's graph snapshot (weighted, links read in both directions as the snapshot stores them),
 * scaled so the most central live memory scores 1. This is the influence leaderboard's `graph` factor: a memory
 * linked to many well-linked memories ranks high whether or not it was ever recalled. Reads the graph only: its edges
 * are copied, then the rounds run on the copy, letting requests in between the copy's slices and the rounds (at 100k
 * memories the whole computation held the event loop for about half a second).
 */
import { Effect } from "effect"
import { pageRankYielding as rankOver } from "../graph/PageRank.ts"
import { type LiveGraph, makeEdgeBuffer } from "../brain/graph/LiveGraph.ts"

const damping = 0.85
const iterations = 20
const everyEdge = Number.MAX_SAFE_INTEGER
/** The copy yields after every 4,096 nodes (about 5 ms at 27 links a memory on a quiet machine). */
const copyYieldMask = 4_095

export interface Centrality {
  /** Scaled PageRank by memory id (live memories only), in [0, 1]. */
  readonly of: (memoryId: string) => number
  /** The most central memories, highest first. */
  readonly top: (count: number) => ReadonlyArray<string>
}

export const pageRank = (graph: LiveGraph): Effect.Effect<Centrality> =>
  Effect.gen(function*() {
    const size = graph.nodeCount
    // Who is alive is copied with the edges: the brain may take in writes between the rounds.
    const alive = new Uint8Array(size)
    for (let u = 0; u < size; u++) alive[u] = graph.isRemoved(u) ? 0 : 1
    // The live edges once into compressed rows (base and delta merged, tombstones left out): the iterations then
    // run over typed arrays instead of merging each node's lists twenty times. Both passes yield every few thousand
    // nodes (the copy took 150 ms of the event loop at 100k memories beside a retention sweep, stop 69), so the brain
    // may take in writes between them: the second pass leaves out targets past the copy (memories appended
    // meanwhile), keeps each row to the length the first pass counted, and pads a shorter one with weightless loops.
    const buffer = makeEdgeBuffer()
    const offsets = new Int32Array(size + 1)
    for (let u = 0; u < size; u++) {
      offsets[u + 1] = offsets[u]! + (alive[u] === 1 ? graph.edgesOf(u, everyEdge, buffer) : 0)
      if ((u & copyYieldMask) === copyYieldMask) yield* Effect.yieldNow
    }
    const targets = new Int32Array(offsets[size]!)
    const weights = new Float64Array(offsets[size]!)
    for (let u = 0; u < size; u++) {
      if (alive[u] === 0) continue
      const count = graph.edgesOf(u, everyEdge, buffer)
      const end = offsets[u + 1]!
      let write = offsets[u]!
      for (let e = 0; e < count && write < end; e++) {
        if (buffer.targets[e]! >= size) continue
        targets[write] = buffer.targets[e]!
        weights[write++] = buffer.weights[e]!
      }
      for (; write < end; write++) targets[write] = u
      if ((u & copyYieldMask) === copyYieldMask) yield* Effect.yieldNow
    }
    const rank = yield* rankOver({ size, offsets, targets, weights, alive: (u) => alive[u] === 1 }, {
      damping,
      maxRounds: iterations
    })
    let highest = 0
    for (let u = 0; u < size; u++) if (rank[u]! > highest) highest = rank[u]!
    return {
      of: (memoryId) => {
        const index = graph.indexOf.get(memoryId)
        // A memory the brain took in after the copy has no rank yet.
        return index === undefined || index >= size || highest === 0 ? 0 : rank[index]! / highest
      },
      top: (count) => {
        const order: Array<number> = []
        for (let u = 0; u < size; u++) if (alive[u] === 1) order.push(u)
        order.sort((a, b) => rank[b]! - rank[a]!)
        return order.slice(0, count).map((u) => graph.ids[u]!)
      }
    } satisfies Centrality
  })
