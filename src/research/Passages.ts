/**
 * Picks the parts of a page worth showing for a question: a long page is cut into passages, each scored by how
 * many of the question's words it contains, and the best are kept in page order within a character budget. The
 * same scoring ranks sentences for the offline answer. Pure functions, no I/O.
 */

const stopwords = new Set([
  "the",
  "and",
  "for",
  "are",
  "but",
  "not",
  "you",
  "all",
  "any",
  "can",
  "had",
  "her",
  "was",
  "one",
  "our",
  "out",
  "has",
  "have",
  "his",
  "how",
  "its",
  "may",
  "new",
  "now",
  "old",
  "see",
  "two",
  "who",
  "did",
  "does",
  "what",
  "when",
  "where",
  "which",
  "why",
  "with",
  "this",
  "that",
  "from",
  "they",
  "them",
  "then",
  "than",
  "there",
  "their",
  "about",
  "into",
  "over",
  "also",
  "just",
  "some",
  "such",
  "only",
  "other",
  "would",
  "could",
  "should",
  "will",
  "been",
  "being",
  "were",
  "your",
  "more",
  "most",
  "very",
  "is",
  "in",
  "of",
  "to",
  "on",
  "at",
  "by",
  "or",
  "as",
  "it",
  "be",
  "an",
  "a"
])

/** The distinct content words of a text, lowercased, light plural stripping so "releases" meets "release". */
export const contentWords = (text: string): ReadonlySet<string> =>
  new Set(
    (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
      .filter((word) => word.length >= 3 && !stopwords.has(word))
      .map((word) => word.length > 4 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word)
  )

export const overlap = (words: ReadonlySet<string>, text: string) => {
  let hits = 0
  for (const word of contentWords(text)) if (words.has(word)) hits++
  return hits
}

/** Paragraphs, with long ones cut at sentence ends into pieces of about `size` characters. */
const passagesOf = (text: string, size: number): Array<string> =>
  text.split(/\n{2,}/).map((paragraph) => paragraph.trim()).filter((paragraph) => paragraph !== "").flatMap(
    (paragraph) => {
      if (paragraph.length <= size) return [paragraph]
      const pieces: Array<string> = []
      let piece = ""
      for (const sentence of paragraph.split(/(?<=[.!?])\s+/)) {
        if (piece !== "" && piece.length + sentence.length > size) {
          pieces.push(piece)
          piece = ""
        }
        piece = piece === "" ? sentence : `${piece} ${sentence}`
      }
      if (piece !== "") pieces.push(piece.length > size * 2 ? piece.slice(0, size * 2) : piece)
      return pieces
    }
  )

/** The page itself when it fits; otherwise its best passages for the question, in page order, marked where cut. */
export const excerpt = (text: string, question: string, maxChars: number): string => {
  const trimmed = text.trim()
  if (trimmed.length <= maxChars) return trimmed
  const words = contentWords(question)
  const passages = passagesOf(trimmed, 800).map((passage, index) => ({
    passage,
    index,
    // Earlier passages win ties: pages tend to say what they are about first.
    score: overlap(words, passage) - index / 10_000
  }))
  const chosen = new Set<number>()
  let used = 0
  for (const candidate of [...passages].sort((a, b) => b.score - a.score)) {
    if (used + candidate.passage.length > maxChars) continue
    chosen.add(candidate.index)
    used += candidate.passage.length + 2
  }
  const kept = passages.filter((passage) => chosen.has(passage.index))
  return kept.map((passage, position) => {
    const gap = position > 0 && kept[position - 1]!.index !== passage.index - 1
    return `${gap ? "…\n\n" : ""}${passage.passage}`
  }).join("\n\n")
}

/** Sentences of a text that are long enough to stand on their own. */
export const sentencesOf = (text: string): Array<string> =>
  text.replace(/^#+\s*/gm, "").split(/(?<=[.!?])\s+|\n+/).map((sentence) => sentence.replace(/\s+/g, " ").trim())
    .filter((sentence) => sentence.length >= 25 && sentence.length <= 600 && /[\p{L}]/u.test(sentence))
