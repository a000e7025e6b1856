/**
 * How much of the query a memory contains, for the reranker: each content word of the query (stop words dropped,
 * compared by stem, so "painted" finds "painting") counts by how rare it is among the candidates — a name that
 * nearly every candidate holds (a speaker in a conversation) tells them apart least, a rare word most. Computed from
 * the candidates' texts alone, so the brain and SQL paths score alike. Stems are kept across recalls (below): the same
 * memories come back recall after recall.
 */
import { stem } from "porter2"
import { englishStopWords } from "./keyword/QueryLexemes.ts"

/**
 * Each word's stem, kept across recalls: candidates and queries share most of their words, and stemming them anew on
 * every recall was about 4 % of a recall's CPU. Emptied when it grows past `stemCacheLimit` words (a vocabulary of
 * that size fits a few MB).
 */
const stemCache = new Map<string, string>()
const stemCacheLimit = 100_000

const stemOf = (word: string): string => {
  let stemmed = stemCache.get(word)
  if (stemmed === undefined) {
    stemmed = stem(word)
    if (stemCache.size >= stemCacheLimit) stemCache.clear()
    stemCache.set(word, stemmed)
  }
  return stemmed
}

const contentWords = (text: string): Array<string> =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length >= 2 && !englishStopWords.has(word))

/**
 * The distinct stems of a candidate's content words, kept for the texts recall returns again and again (a bank's
 * memories are few next to its recalls): splitting a text into words is most of this module's cost. Bounded like the
 * stems, a few MB.
 */
const textStems = new Map<string, ReadonlyArray<string>>()
const textStemsLimit = 20_000

const stemsOfText = (text: string): ReadonlyArray<string> => {
  let stems = textStems.get(text)
  if (stems === undefined) {
    stems = [...new Set(contentWords(text).map(stemOf))]
    if (textStems.size >= textStemsLimit) textStems.clear()
    textStems.set(text, stems)
  }
  return stems
}

/**
 * Two scores in 0–1 per text, in the texts' order: `own`, the weighted share of the query's stems the text contains;
 * and `episode`, the share the texts of its episode (`episodes[i]`, see `EpisodeSupport.episodes`) contain between
 * them — a question whose words are spread over several turns of one conversation ("Where has Melanie camped?":
 * the beach in one turn, the forest in another) is answered by that conversation more than by a turn elsewhere
 * that happens to hold one of them.
 */
export const queryCoverages = (
  query: string,
  texts: ReadonlyArray<string>,
  episodes: ReadonlyArray<number>
): { readonly own: Array<number>; readonly episode: Array<number> } => {
  const queryStems = [...new Set(contentWords(query).map(stemOf))]
  if (queryStems.length === 0) return { own: texts.map(() => 0), episode: texts.map(() => 0) }
  const slotOfStem = new Map(queryStems.map((word, index) => [word, index]))
  const width = queryStems.length
  // Which of the query's stems each text holds: one flag per (text, query stem).
  const holds = new Uint8Array(texts.length * width)
  texts.forEach((text, index) => {
    for (const stemmed of stemsOfText(text)) {
      const slot = slotOfStem.get(stemmed)
      if (slot !== undefined) holds[index * width + slot] = 1
    }
  })
  // BM25's inverse document frequency over the candidates: never zero, so a word all of them hold still counts a little.
  const weights = queryStems.map((_, slot) => {
    let df = 0
    for (let index = 0; index < texts.length; index++) df += holds[index * width + slot]!
    return Math.log(1 + (texts.length - df + 0.5) / (df + 0.5))
  })
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  const share = (held: (slot: number) => boolean) => {
    let covered = 0
    for (let slot = 0; slot < width; slot++) if (held(slot)) covered += weights[slot]!
    return covered / total
  }
  const byEpisode = new Map<number, Array<number>>()
  episodes.slice(0, texts.length).forEach((episode, index) => {
    const members = byEpisode.get(episode)
    if (members === undefined) byEpisode.set(episode, [index])
    else members.push(index)
  })
  const episodeShare = new Map(
    [...byEpisode].map((
      [episode, members]
    ) => [episode, share((slot) => members.some((index) => holds[index * width + slot] === 1))])
  )
  return {
    own: texts.map((_, index) => share((slot) => holds[index * width + slot] === 1)),
    episode: texts.map((_, index) => episodeShare.get(episodes[index]!)!)
  }
}
