/**
 * Memories said close together belong to one episode (a conversation, a session), and the turn that answers a
 * question usually sits in the episode that talks about it most: the reranker lifts each candidate by the best score
 * in its episode — the document score beside the passage score of passage retrieval (MaxP), with episodes found from
 * when memories were said (a gap of more than an hour starts a new one) because conversations carry no document.
 * The candidate's own score counts, so a bank whose candidates all share one episode is ordered as without it. Pure,
 * computed from the candidates alone, so the brain and SQL paths score alike.
 */

/** A silence longer than this between two candidates said one after the other starts a new episode. */
export const episodeGapMs = 3_600_000

/** For each item, the best `score` in its episode (its own when its time is unknown), in the items' order. */
export const episodeSupport = (
  items: ReadonlyArray<{ readonly said: number | undefined; readonly score: number }>,
  gapMs: number = episodeGapMs
): Array<number> => {
  const support = items.map((item) => item.score)
  const timed = items.flatMap((item, index) =>
    item.said === undefined ? [] : [{ index, said: item.said, score: item.score }]
  )
    .sort((a, b) => a.said - b.said || a.index - b.index)
  let start = 0
  for (let end = 1; end <= timed.length; end++) {
    if (end < timed.length && timed[end]!.said - timed[end - 1]!.said <= gapMs) continue
    const members = timed.slice(start, end)
    const best = Math.max(...members.map((member) => member.score))
    for (const member of members) support[member.index] = best
    start = end
  }
  return support
}
