/**
 * How much of the query a memory contains, for the reranker: each content word of the query (stop words dropped,
 * compared by stem, so "painted" finds "painting") counts by how rare it is among the candidates — a name that
 * nearly every candidate holds (a speaker in a conversation) tells them apart least, a rare word most. Computed from
 * the candidates' texts alone, so the brain and SQL paths score alike.
 */
import { stem } from "porter2"
import { englishStopWords } from "./keyword/QueryLexemes.ts"

/** The distinct stems of a text's content words; `stems` remembers each word's stem (candidates share most words). */
const contentStems = (text: string, stems: Map<string, string>): Set<string> => {
  const found = new Set<string>()
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length < 2 || englishStopWords.has(word)) continue
    let stemmed = stems.get(word)
    if (stemmed === undefined) {
      stemmed = stem(word)
      stems.set(word, stemmed)
    }
    found.add(stemmed)
  }
  return found
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
  const stems = new Map<string, string>()
  const queryStems = [...contentStems(query, stems)]
  if (queryStems.length === 0) return { own: texts.map(() => 0), episode: texts.map(() => 0) }
  const documents = texts.map((text) => contentStems(text, stems))
  // BM25's inverse document frequency over the candidates: never zero, so a word all of them hold still counts a little.
  const weights = queryStems.map((word) => {
    const df = documents.filter((document) => document.has(word)).length
    return Math.log(1 + (documents.length - df + 0.5) / (df + 0.5))
  })
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  const share = (holds: (word: string) => boolean) => {
    let covered = 0
    queryStems.forEach((word, index) => {
      if (holds(word)) covered += weights[index]!
    })
    return covered / total
  }
  const byEpisode = new Map<number, Array<ReadonlySet<string>>>()
  documents.forEach((document, index) => {
    const members = byEpisode.get(episodes[index]!)
    if (members === undefined) byEpisode.set(episodes[index]!, [document])
    else members.push(document)
  })
  const episodeShare = new Map(
    [...byEpisode].map(([episode, members]) => [episode, share((word) => members.some((member) => member.has(word)))])
  )
  return {
    own: documents.map((document) => share((word) => document.has(word))),
    episode: documents.map((_, index) => episodeShare.get(episodes[index]!)!)
  }
}
