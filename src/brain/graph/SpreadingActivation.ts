/**
 * Spreading activation over a `GraphSnapshot`: from a few seed memories, activation flows along links for a
 * bounded number of hops, decaying on each. Synchronous and allocation-light on purpose (it runs inside a recall
 * request): no Effect, no Map and no per-edge object in the loop; scratch arrays are pooled across calls.
 *
 * Semantics. A reached node's activation is the MAX over its neighbours u of
 * `activation(u) * edgeWeight * typeWeight[linkType] * decay`, i.e. the strength of its single best path of at
 * most `hops` links. Max rather than a sum because it is independent of evaluation order, never exceeds the
 * strongest seed when weights are at most 1 (a hub touching hundreds of weakly active memories does not
 * outrank a direct neighbour of a seed), and gives each node one meaningful parent. Rounds are synchronous:
 * round h reads the activations left by round h - 1, so a node's `hops` is the length of the path behind its
 * activation. Seeds keep their given activation. A node spreads in the next round only when its activation is
 * at least `threshold` and improved by more than `minImprovement` (relative) since it last spread; nodes whose
 * activation would stay under `threshold` are not reported at all. Fan-out: a node follows at most `fanOut`
 * of its edges, the strongest by stored weight (a prefix of its adjacency list); query-time type weights are
 * applied after that choice, so a type weighted 0 still takes slots: leave a type out at build time to free them.
 *
 * Pruning. With `maxNodes`, a candidate activation below the `maxNodes`-th strongest already reached cannot make the
 * result, since activations only grow and the reached set only widens. In the last round it spreads no further, so
 * it is skipped there. In earlier rounds it is skipped too when nothing it spreads can be stronger than itself (decay
 * times the greatest type weight times the greatest edge weight at most 1) and `minImprovement` is 0: then a node's
 * activation after round h is its best path of at most h links, whatever order the work came in, and a path that
 * reaches the result runs through activations at least as strong as its end. (With a minimum improvement, whether a
 * node spreads again depends on what it spread before, so a skipped weak path could change what a strong one spreads.)
 * On a bank's graph most candidates of the second and third hop are far below the result's weakest member.
 */
import type { GraphSnapshot, LinkType } from "./GraphSnapshot.ts"
import type { RankBuffers } from "./ActivationRanking.ts"
import { cutoffForBest, makeRankBuffers, rankByActivation } from "./ActivationRanking.ts"
import { typeTable } from "./GraphSnapshot.ts"
import { LiveGraph, makeEdgeBuffer } from "./LiveGraph.ts"

export interface Seed {
  readonly index: number
  readonly activation: number
}

export interface SpreadOptions {
  /** Links followed from a seed at most (0 to 255). Default 3. */
  readonly hops?: number
  /** Multiplier applied per hop, in (0, 1]. Default 0.5. */
  readonly decay?: number
  /** Edges followed per node and hop, strongest first. Default 32. */
  readonly fanOut?: number
  /** Least activation a node needs to be reported and to spread further. Default 0.01. */
  readonly threshold?: number
  /** Relative gain a node's activation needs before it spreads again. Default 0.05. */
  readonly minImprovement?: number
  /** Per link type multiplier (default 1 for every type). */
  readonly typeWeights?: Partial<Record<LinkType, number>>
  /** Reports only the strongest `maxNodes` nodes (seeds included). Default: all reached. */
  readonly maxNodes?: number
}

/**
 * Parallel arrays ordered by activation descending; activations equal at float32 precision keep the order in
 * which the nodes were reached (deterministic for the same snapshot, seeds and options). With `maxNodes`, a node
 * counts as reached in the last round only once it is strong enough to make the result, so exact ties can order
 * differently than without it; every node, activation, hop count and parent reported is the same.
 */
export interface SpreadResult {
  readonly indices: Int32Array
  readonly activations: Float64Array
  /** Links on the path behind the activation; 0 for a seed. */
  readonly hops: Uint8Array
  /** The neighbour the activation came from (of several at exactly that activation and hop count, the lowest); -1 for a seed. */
  readonly parents: Int32Array
  /**
   * Edges examined (activation computed and compared) over the whole query. A node's list is cut short where its
   * remaining, weaker edges could no longer reach the threshold; those are not counted.
   */
  readonly edgesRelaxed: number
  /**
   * Nodes reported before the `maxNodes` cut: the seeds and every node reached with at least `threshold` (in the
   * last round, with what could still make the cut).
   */
  readonly nodesReached: number
}

/**
 * Query state as a sparse set, because the loop is bound by memory latency once the graph outgrows the cache.
 * Only two arrays are indexed by node and sized by the graph: `seen` (2 bytes a node, small enough to stay in
 * cache) and `position` (4 bytes). Everything else is dense, indexed by the position at which a node was first
 * reached in this query, appended to in order and grown on demand (a query reaches a few thousand nodes, not
 * the whole bank): reaching a new node costs one random read and one random write, and ranking the result reads
 * nothing at random. `seen[v] > base` means v was reached in this query (so `position[v]` is valid);
 * `seen[v] === round` means it is already queued for the next round. Rounds number on across queries, so nothing
 * is cleared between queries until the 16-bit counter is about to wrap.
 */
interface Scratch {
  readonly seen: Uint16Array
  readonly position: Int32Array
  round: number
  touched: Int32Array
  activation: Float64Array
  /** The activation a node had when it last spread (0: never). */
  spreadAt: Float64Array
  parent: Int32Array
  hops: Uint8Array
  /** Positions (not nodes) to spread from in the current and the next round. */
  frontier: Int32Array
  next: Int32Array
  frontierActivation: Float64Array
  readonly rank: RankBuffers
}

const initialRoom = 4096

const makeScratch = (capacity: number): Scratch => ({
  seen: new Uint16Array(capacity),
  position: new Int32Array(capacity),
  round: 0,
  touched: new Int32Array(initialRoom),
  activation: new Float64Array(initialRoom),
  spreadAt: new Float64Array(initialRoom),
  parent: new Int32Array(initialRoom),
  hops: new Uint8Array(initialRoom),
  frontier: new Int32Array(initialRoom),
  next: new Int32Array(initialRoom),
  frontierActivation: new Float64Array(initialRoom),
  rank: makeRankBuffers(initialRoom)
})

/** Doubles the dense arrays, keeping their contents. */
const grow = (scratch: Scratch) => {
  const room = scratch.touched.length * 2
  const larger = <A extends Int32Array | Float64Array | Uint8Array>(array: A, make: (room: number) => A) => {
    const copy = make(room)
    copy.set(array as never)
    return copy
  }
  scratch.touched = larger(scratch.touched, (r) => new Int32Array(r))
  scratch.activation = larger(scratch.activation, (r) => new Float64Array(r))
  scratch.spreadAt = larger(scratch.spreadAt, (r) => new Float64Array(r))
  scratch.parent = larger(scratch.parent, (r) => new Int32Array(r))
  scratch.hops = larger(scratch.hops, (r) => new Uint8Array(r))
  scratch.frontier = larger(scratch.frontier, (r) => new Int32Array(r))
  scratch.next = larger(scratch.next, (r) => new Int32Array(r))
  scratch.frontierActivation = larger(scratch.frontierActivation, (r) => new Float64Array(r))
}

/** A query uses at most `hops + 1` rounds (hops at most 255). */
const lastSafeRound = 0xffff - 257

/**
 * Scratch arrays keyed by capacity (the node count rounded up to a power of two, so banks of similar size share
 * one), the most recently used last. `spread` is synchronous, so one scratch per capacity is never used twice
 * at once; the pool keeps a few capacities so a bank that went away does not pin its arrays for long.
 */
const pool = new Map<number, Scratch>()
const pooledCapacities = 4

const acquire = (nodeCount: number): Scratch => {
  let capacity = 1024
  while (capacity < nodeCount) capacity *= 2
  let scratch = pool.get(capacity)
  if (scratch === undefined) scratch = makeScratch(capacity)
  else pool.delete(capacity)
  pool.set(capacity, scratch)
  if (pool.size > pooledCapacities) pool.delete(pool.keys().next().value!)
  return scratch
}

/** A live graph's merged edges for the node being spread from (`spread` is synchronous: one buffer serves all). */
const liveEdges = makeEdgeBuffer()

const check = (ok: boolean, message: string) => {
  if (!ok) throw new RangeError(`spread: ${message}`)
}

export const spread = (
  graph: GraphSnapshot | LiveGraph,
  seeds: ReadonlyArray<Seed>,
  options: SpreadOptions = {}
): SpreadResult => {
  const maxHops = options.hops ?? 3
  const decay = options.decay ?? 0.5
  const fanOut = options.fanOut ?? 32
  const threshold = options.threshold ?? 0.01
  const improvement = 1 + (options.minImprovement ?? 0.05)
  const maxNodes = options.maxNodes ?? Infinity
  check(Number.isInteger(maxHops) && maxHops >= 0 && maxHops <= 255, "hops must be an integer from 0 to 255")
  check(decay > 0 && decay <= 1, "decay must be in (0, 1]")
  check(Number.isInteger(fanOut) && fanOut >= 1, "fanOut must be a positive integer")
  check(threshold > 0, "threshold must be positive")
  check(improvement >= 1, "minImprovement must not be negative")
  check(maxNodes >= 0, "maxNodes must not be negative")
  const typeWeight = typeTable(options.typeWeights, 1)
  let maxTypeWeight = 0
  let uniform = true
  for (let t = 0; t < typeWeight.length; t++) {
    check(typeWeight[t]! >= 0, "type weights must not be negative")
    if (typeWeight[t]! > maxTypeWeight) maxTypeWeight = typeWeight[t]!
    if (typeWeight[t] !== typeWeight[0]) uniform = false
  }
  // With one weight for every type the loop need not read `types` at all: one cache miss less per node.
  const typeFactor = uniform ? maxTypeWeight : -1
  // See "Pruning" above: whether a candidate too weak for the result may be skipped before the last round.
  const pruneEveryRound = improvement === 1 && decay * maxTypeWeight * graph.strongestWeight <= 1

  // A live graph with changes is read through `edgesOf` (base and delta merged, tombstones skipped); one without
  // changes, and a plain snapshot, straight from the arrays.
  const live = graph instanceof LiveGraph && !graph.isBase ? graph : undefined
  // Base lists read in place may hold edges to tombstones or detached memories: those are skipped in the loop, and
  // the fan-out then counts the edges taken.
  const baseHasGaps = live?.hasGaps ?? false
  const snapshot = graph instanceof LiveGraph ? graph.base : graph
  const n = graph.nodeCount
  const { offsets, targets, weights, types } = snapshot
  const scratch = acquire(n)
  const { seen, position } = scratch
  let { touched, activation, spreadAt, parent, hops, frontier, next, frontierActivation } = scratch
  let room = touched.length
  // After `grow`, every dense array is a new one: read them all again (this happens a few times per scratch).
  const regrow = () => {
    scratch.frontier = frontier
    scratch.next = next
    grow(scratch)
    ;({ touched, activation, spreadAt, parent, hops, frontier, next, frontierActivation } = scratch)
    room = touched.length
  }
  if (scratch.round > lastSafeRound) {
    seen.fill(0)
    scratch.round = 0
  }
  const base = scratch.round
  let round = ++scratch.round
  let reached = 0
  let nextLength = 0

  for (const seed of seeds) {
    const v = seed.index
    check(
      Number.isInteger(v) && v >= 0 && v < n && !(live?.isRemoved(v) ?? false),
      `seed index ${v} is not a node of the snapshot`
    )
    if (!(seed.activation > 0)) continue
    if (seen[v]! <= base) {
      if (reached === room) regrow()
      seen[v] = round
      position[v] = reached
      touched[reached] = v
      activation[reached] = seed.activation
      spreadAt[reached] = 0
      parent[reached] = -1
      hops[reached] = 0
      if (seed.activation >= threshold) next[nextLength++] = reached
      reached++
    } else {
      // Listed twice: the stronger activation counts, queued once.
      const p = position[v]!
      if (seed.activation >= threshold && activation[p]! < threshold) next[nextLength++] = p
      if (seed.activation > activation[p]!) activation[p] = seed.activation
    }
  }

  let relaxed = 0
  for (let hop = 1; hop <= maxHops && nextLength > 0; hop++) {
    const swap = frontier
    frontier = next
    next = swap
    const frontierLength = nextLength
    nextLength = 0
    // Round `hop` reads the activations round `hop - 1` left, whatever this round writes.
    for (let f = 0; f < frontierLength; f++) {
      const p = frontier[f]!
      frontierActivation[f] = activation[p]!
      spreadAt[p] = activation[p]!
    }
    round = ++scratch.round
    const last = hop === maxHops
    // A new activation weaker than what the result already holds changes nothing it reports (see "Pruning"): skip
    // it, and a node's weaker edges with it. Most of a query's edges are in the last rounds (the frontier grows with
    // every hop); the result is what it was, but for the order of exact ties.
    const floor = (last || pruneEveryRound) && reached > maxNodes
      ? Math.max(threshold, cutoffForBest(activation, reached, maxNodes, scratch.rank))
      : threshold
    for (let f = 0; f < frontierLength; f++) {
      const u = touched[frontier[f]!]!
      const outgoing = frontierActivation[f]! * decay
      // Below this stored weight no edge of u reaches the floor, and the list is strongest first.
      const weakest = floor / (outgoing * maxTypeWeight)
      let edgeTargets = targets
      let edgeWeights = weights
      let edgeTypes = types
      let start: number
      let end: number
      let skipGaps = false
      if (live === undefined || live.readsBase(u)) {
        start = offsets[u]!
        end = offsets[u + 1]!
        skipGaps = baseHasGaps
        if (!skipGaps && end - start > fanOut) end = start + fanOut
      } else {
        start = 0
        end = live.edgesOf(u, fanOut, liveEdges, weakest)
        edgeTargets = liveEdges.targets
        edgeWeights = liveEdges.weights
        edgeTypes = liveEdges.types
      }
      let e = start
      let gaps = 0
      for (; e < end; e++) {
        if (skipGaps) {
          if (live!.isGap(edgeTargets[e]!)) {
            gaps++
            continue
          }
          if (e - start - gaps === fanOut) break
        }
        const w = edgeWeights[e]!
        if (w < weakest) break
        const candidate = outgoing * w * (typeFactor >= 0 ? typeFactor : typeWeight[edgeTypes[e]!]!)
        if (candidate < floor) continue
        const v = edgeTargets[e]!
        const stamp = seen[v]!
        if (stamp <= base) {
          if (reached === room) regrow()
          seen[v] = round
          position[v] = reached
          touched[reached] = v
          activation[reached] = candidate
          spreadAt[reached] = 0
          parent[reached] = u
          hops[reached] = hop
          if (!last) next[nextLength++] = reached
          reached++
        } else {
          const p = position[v]!
          if (candidate > activation[p]! && hops[p] !== 0) {
            activation[p] = candidate
            parent[p] = u
            hops[p] = hop
            if (!last && stamp !== round && candidate > spreadAt[p]! * improvement) {
              seen[v] = round
              next[nextLength++] = p
            }
          } else if (candidate === activation[p]! && hops[p] === hop && u < parent[p]!) {
            // An exact tie within one round goes to the lower parent, not to whichever came first: pruning changes
            // the order nodes are queued in, and must not change the reported parent.
            parent[p] = u
          }
        }
      }
      relaxed += e - start - gaps
    }
  }
  scratch.frontier = frontier
  scratch.next = next
  return collect(scratch, reached, Math.min(reached, maxNodes), relaxed)
}

/** Copies the best `count` reached nodes out of the scratch, strongest first (see `rankByActivation`). */
const collect = (scratch: Scratch, reached: number, count: number, relaxed: number): SpreadResult => {
  const { touched, activation, parent, hops } = scratch
  const order = rankByActivation(activation, reached, count, scratch.rank)
  const result = {
    indices: new Int32Array(count),
    activations: new Float64Array(count),
    hops: new Uint8Array(count),
    parents: new Int32Array(count),
    edgesRelaxed: relaxed,
    nodesReached: reached
  }
  for (let k = 0; k < count; k++) {
    const p = order[k]!
    result.indices[k] = touched[p]!
    result.activations[k] = activation[p]!
    result.hops[k] = hops[p]!
    result.parents[k] = parent[p]!
  }
  return result
}
