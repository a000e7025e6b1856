/**
 * Community detection on an undirected weighted graph with the Louvain method (local moving that maximises
 * modularity, then aggregation of each community into one node, repeated while anything moves). Nodes are
 * visited in index order and ties go to the lowest community, so the same graph always gives the same clusters.
 */
import { every, runWhole, type Sliced } from "../../brain/Sliced.ts"

export interface UndirectedEdge {
  readonly a: number
  readonly b: number
  readonly weight: number
}

/**
 * One level of local moving; returns each node's community (renumbered 0..k-1) and whether anything moved. It yields
 * every few hundred nodes, so it can run in slices (`Sliced.ts`).
 */
function* localMoving(nodeCount: number, adjacency: ReadonlyArray<Map<number, number>>, selfLoops: Float64Array) {
  const degree = new Float64Array(nodeCount)
  let total = 0
  for (let node = 0; node < nodeCount; node++) {
    let sum = selfLoops[node]! * 2
    for (const weight of adjacency[node]!.values()) sum += weight
    degree[node] = sum
    total += sum
  }
  const community = Int32Array.from({ length: nodeCount }, (_, index) => index)
  const communityDegree = Float64Array.from(degree)
  const twoM = total === 0 ? 1 : total
  let moved = false
  const pause = every(200)
  for (let sweep = 0; sweep < 25; sweep++) {
    let changed = false
    for (let node = 0; node < nodeCount; node++) {
      if (pause()) yield
      const own = community[node]!
      const links = new Map<number, number>()
      for (const [neighbour, weight] of adjacency[node]!) {
        const target = community[neighbour]!
        links.set(target, (links.get(target) ?? 0) + weight)
      }
      communityDegree[own]! -= degree[node]!
      let best = own
      let bestGain = (links.get(own) ?? 0) - (communityDegree[own]! * degree[node]!) / twoM
      for (const [target, weight] of [...links].sort((x, y) => x[0] - y[0])) {
        const gain = weight - (communityDegree[target]! * degree[node]!) / twoM
        if (gain > bestGain + 1e-12) {
          best = target
          bestGain = gain
        }
      }
      communityDegree[best]! += degree[node]!
      if (best !== own) {
        community[node] = best
        changed = true
        moved = true
      }
    }
    if (!changed) break
  }
  const renumber = new Map<number, number>()
  const result = Int32Array.from(community, (value) => {
    let mapped = renumber.get(value)
    if (mapped === undefined) {
      mapped = renumber.size
      renumber.set(value, mapped)
    }
    return mapped
  })
  return { community: result, count: renumber.size, moved }
}

/** The community of every node, numbered from 0 in order of first appearance. */
export const louvain = (nodeCount: number, edges: ReadonlyArray<UndirectedEdge>): Int32Array =>
  runWhole(louvainSteps(nodeCount, edges))

/**
 * `louvain` as sliced work: a snapshot of this repository's `src/` (542 files) spent about 70 ms in it in one piece
 * (`bench/isolation.ts`, phase 4).
 */
export function* louvainSteps(nodeCount: number, edges: ReadonlyArray<UndirectedEdge>): Sliced<Int32Array> {
  let membership = Int32Array.from({ length: nodeCount }, (_, index) => index)
  let levelNodes = nodeCount
  let levelEdges: ReadonlyArray<UndirectedEdge> = edges
  let selfLoops = new Float64Array(nodeCount)
  for (let level = 0; level < 10; level++) {
    const adjacency = Array.from({ length: levelNodes }, () => new Map<number, number>())
    for (const edge of levelEdges) {
      if (edge.a === edge.b) continue
      adjacency[edge.a]!.set(edge.b, (adjacency[edge.a]!.get(edge.b) ?? 0) + edge.weight)
      adjacency[edge.b]!.set(edge.a, (adjacency[edge.b]!.get(edge.a) ?? 0) + edge.weight)
    }
    yield
    const { community, count, moved } = yield* localMoving(levelNodes, adjacency, selfLoops)
    membership = Int32Array.from(membership, (node) => community[node]!)
    if (!moved || count === levelNodes) break
    const nextLoops = new Float64Array(count)
    const merged = new Map<string, number>()
    for (let node = 0; node < levelNodes; node++) nextLoops[community[node]!]! += selfLoops[node]!
    for (const edge of levelEdges) {
      const a = community[edge.a]!
      const b = community[edge.b]!
      if (a === b) nextLoops[a]! += edge.weight
      else {
        const key = a < b ? `${a}:${b}` : `${b}:${a}`
        merged.set(key, (merged.get(key) ?? 0) + edge.weight)
      }
    }
    levelEdges = [...merged].map(([key, weight]) => {
      const [a, b] = key.split(":").map(Number) as [number, number]
      return { a, b, weight }
    })
    selfLoops = nextLoops
    levelNodes = count
  }
  return membership
}
