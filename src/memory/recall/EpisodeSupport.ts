/**
 * Memories said close together belong to one episode (a conversation, a session), and the turn that answers a
 * question usually sits in the episode that talks about it most: the reranker lifts each candidate by the best
 * score of another candidate of its episode — the passage-level evidence of document retrieval, with episodes found
 * from when memories were said (a gap of more than an hour starts a new one) because conversations carry no
 * document. Pure, computed from the candidates alone, so the brain and SQL paths score alike.
 */

/** A silence longer than this between two candidates said one after the other starts a new episode. */
export const episodeGapMs = 3_600_000

/**
 * For each item, the best `score` among the other items of its episode (0 when it is alone or its time is unknown),
 * in the items' order.
 */
export const episodeSupport = (
  items: ReadonlyArray<{ readonly said: number | undefined; readonly score: number }>,
  gapMs: number = episodeGapMs
): Array<number> => {
  const support = items.map(() => 0)
  const timed = items.flatMap((item, index) => item.said === undefined ? [] : [{ index, said: item.said, score: item.score }])
    .sort((a, b) => a.said - b.said || a.index - b.index)
  let start = 0
  for (let end = 1; end <= timed.length; end++) {
    if (end < timed.length && timed[end]!.said - timed[end - 1]!.said <= gapMs) continue
    // The episode is timed[start, end): each member gets the best score of the others (the best, or the runner-up).
    const members = timed.slice(start, end)
    const ranked = [...members].sort((a, b) => b.score - a.score)
    for (const member of members) {
      const other = ranked[0] === member ? ranked[1] : ranked[0]
      support[member.index] = other?.score ?? 0
    }
    start = end
  }
  return support
}
