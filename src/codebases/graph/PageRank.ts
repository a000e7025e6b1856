/**
 * Weighted PageRank by power iteration (damping 0.85, dangling mass spread uniformly, stop when the summed change
 * is below N·1e-6 or after 100 rounds), and min-max normalisation to [0, 1] (all equal: 0.5).
 */
export interface WeightedEdge {
  readonly from: number
  readonly to: number
  readonly weight: number
}

export const pageRank = (nodeCount: number, edges: ReadonlyArray<WeightedEdge>, damping = 0.85): Float64Array => {
  const rank = new Float64Array(nodeCount).fill(nodeCount === 0 ? 0 : 1 / nodeCount)
  if (nodeCount === 0) return rank
  const outWeight = new Float64Array(nodeCount)
  for (const edge of edges) outWeight[edge.from]! += edge.weight
  const next = new Float64Array(nodeCount)
  for (let round = 0; round < 100; round++) {
    let dangling = 0
    for (let node = 0; node < nodeCount; node++) if (outWeight[node] === 0) dangling += rank[node]!
    const base = (1 - damping) / nodeCount + (damping * dangling) / nodeCount
    next.fill(base)
    for (const edge of edges) next[edge.to]! += (damping * rank[edge.from]! * edge.weight) / outWeight[edge.from]!
    let change = 0
    for (let node = 0; node < nodeCount; node++) change += Math.abs(next[node]! - rank[node]!)
    rank.set(next)
    if (change < nodeCount * 1e-6) break
  }
  return rank
}

export const normalise = (values: ArrayLike<number>): Float64Array => {
  const out = new Float64Array(values.length)
  let min = Infinity
  let max = -Infinity
  for (let index = 0; index < values.length; index++) {
    min = Math.min(min, values[index]!)
    max = Math.max(max, values[index]!)
  }
  for (let index = 0; index < values.length; index++) out[index] = max === min ? 0.5 : (values[index]! - min) / (max - min)
  return out
}
