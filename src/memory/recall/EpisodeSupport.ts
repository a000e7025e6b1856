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

/**
 * Each item's episode, in the items' order: items said within `gapMs` of the previous one (in time order) share a
 * number; an item whose time is unknown is an episode of its own.
 */
export const episodes = (
  items: ReadonlyArray<{ readonly said: number | undefined }>,
  gapMs: number = episodeGapMs
): Array<number> => {
  const timed = items.flatMap((item, index) => item.said === undefined ? [] : [{ index, said: item.said }])
    .sort((a, b) => a.said - b.said || a.index - b.index)
  // Untimed items first take numbers no timed episode uses.
  const episode = items.map((_, index) => index + timed.length)
  let current = 0
  timed.forEach((member, position) => {
    if (position > 0 && member.said - timed[position - 1]!.said > gapMs) current++
    episode[member.index] = current
  })
  return episode
}

/**
 * For each item, the best `score` in its episode (`episode[i]`, from `episodes`; an item whose time is unknown is
 * alone in its own), in the items' order.
 */
export const episodeSupport = (
  scores: ReadonlyArray<number>,
  episode: ReadonlyArray<number>
): Array<number> => {
  const best = new Map<number, number>()
  scores.forEach((score, index) => best.set(episode[index]!, Math.max(best.get(episode[index]!) ?? -Infinity, score)))
  return scores.map((_, index) => best.get(episode[index]!)!)
}

/**
 * For each item, the sum of the best `depth` scores in its episode divided by `depth` (an episode with fewer
 * items counts the missing ones as 0), in the items' order: how strongly the episode as a whole answers, so an
 * episode where several turns score well outranks one lone strong turn — the session that talks about the question
 * rather than the one that happens to share its words once.
 */
export const episodeAgreement = (
  scores: ReadonlyArray<number>,
  episode: ReadonlyArray<number>,
  depth: number
): Array<number> => {
  const best = new Map<number, Array<number>>()
  scores.forEach((score, index) => {
    const members = best.get(episode[index]!)
    if (members === undefined) best.set(episode[index]!, [score])
    else members.push(score)
  })
  const agreement = new Map(
    [...best].map(([key, members]) => [
      key,
      members.sort((a, b) => b - a).slice(0, depth).reduce((sum, score) => sum + score, 0) / depth
    ])
  )
  return scores.map((_, index) => agreement.get(episode[index]!)!)
}
