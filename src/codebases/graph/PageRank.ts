/**
 * Weighted PageRank by power iteration (damping 0.85, dangling mass spread uniformly, stop when the summed change
 * is below N·1e-6 or after 100 rounds) over a codebase's edge list, and min-max normalisation to [0, 1] (all equal:
 * 0.5). The iteration is the shared one in `src/graph/PageRank.ts`.
 */
import { compress, pageRank as rankOver } from "../../graph/PageRank.ts"

export interface WeightedEdge {
  readonly from: number
  readonly to: number
  readonly weight: number
}

export const pageRank = (nodeCount: number, edges: ReadonlyArray<WeightedEdge>, damping = 0.85): Float64Array =>
  rankOver(compress(nodeCount, edges), { damping, maxRounds: 100, tolerance: 1e-6 })

export const normalise = (values: ArrayLike<number>): Float64Array => {
  const out = new Float64Array(values.length)
  let min = Infinity
  let max = -Infinity
  for (let index = 0; index < values.length; index++) {
    min = Math.min(min, values[index]!)
    max = Math.max(max, values[index]!)
  }
  for (let index = 0; index < values.length; index++) {
    out[index] = max === min
      ? 0.5
      : (values[index]! - min) / (max - min)
  }
  return out
}
