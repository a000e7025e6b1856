/**
 * Offers `candidate` to `kept`, the best `limit` seen so far in order (best first), and keeps it only if it is among
 * them: a binary search and one splice, no sort of everything seen. A top-k over a few thousand candidates, where a
 * full sort was what a recall spent its time on.
 */
export const keepBest = <A>(
  kept: Array<A>,
  candidate: A,
  limit: number,
  better: (a: A, b: A) => boolean
): void => {
  if (limit <= 0 || (kept.length === limit && !better(candidate, kept[limit - 1]!))) return
  let low = 0
  let high = kept.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (better(candidate, kept[middle]!)) high = middle
    else low = middle + 1
  }
  kept.splice(low, 0, candidate)
  if (kept.length > limit) kept.pop()
}
