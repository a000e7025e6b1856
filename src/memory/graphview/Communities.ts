/**
 * Groups a weighted graph into communities with deterministic label propagation: every node repeatedly takes
 * the label carrying the most edge weight among its neighbours (ties to the smallest label), so densely linked
 * regions share a label while a long chain of weak links does not collapse into one giant group. Pure.
 */

export interface WeightedEdge {
  readonly source: string
  readonly target: string
  readonly strength: number
}

/** Each node's community, numbered 0.. from the largest community down (ties by the smallest member id). */
export const communities = (
  ids: ReadonlyArray<string>,
  edges: ReadonlyArray<WeightedEdge>,
  maxRounds = 12
): Map<string, number> => {
  const order = [...ids].sort()
  const label = new Map(order.map((id) => [id, id]))
  const neighbours = new Map<string, Array<{ readonly id: string; readonly strength: number }>>()
  const link = (from: string, to: string, strength: number) => {
    const list = neighbours.get(from)
    if (list === undefined) neighbours.set(from, [{ id: to, strength }])
    else list.push({ id: to, strength })
  }
  for (const edge of edges) {
    if (!label.has(edge.source) || !label.has(edge.target) || edge.source === edge.target) continue
    link(edge.source, edge.target, edge.strength)
    link(edge.target, edge.source, edge.strength)
  }
  for (let round = 0; round < maxRounds; round++) {
    let changed = false
    for (const id of order) {
      const around = neighbours.get(id)
      if (around === undefined) continue
      const weight = new Map<string, number>()
      for (const next of around) {
        const theirs = label.get(next.id)!
        weight.set(theirs, (weight.get(theirs) ?? 0) + next.strength)
      }
      let best = label.get(id)!
      let bestWeight = weight.get(best) ?? 0
      for (const [candidate, total] of weight) {
        if (total > bestWeight || (total === bestWeight && candidate < best)) {
          best = candidate
          bestWeight = total
        }
      }
      if (best !== label.get(id)) {
        label.set(id, best)
        changed = true
      }
    }
    if (!changed) break
  }
  const members = new Map<string, Array<string>>()
  for (const id of order) {
    const group = members.get(label.get(id)!)
    if (group === undefined) members.set(label.get(id)!, [id])
    else group.push(id)
  }
  const ranked = [...members.values()].sort((a, b) => b.length - a.length || (a[0]! < b[0]! ? -1 : 1))
  const index = new Map<string, number>()
  ranked.forEach((group, position) => group.forEach((id) => index.set(id, position)))
  return index
}
