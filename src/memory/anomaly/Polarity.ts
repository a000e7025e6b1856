/**
 * The word-level signals the write-time detectors use: a statement's tokens, whether it is negated (the
 * reference's negation list), and how many content words two statements share. Polarity is judged per clause,
 * on the two clauses that share the most: a long conversation turn nearly always holds some negation somewhere,
 * so a whole-statement polarity (the reference's) contradicts almost everything in a chat. Pure and cheap: it
 * runs for every candidate pair of every retain.
 */

const contractions: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bcan't\b/g, "cant"],
  [/\bcannot\b/g, "cant"],
  [/\bwon't\b/g, "wont"],
  [/\bdon't\b/g, "dont"],
  [/\bdidn't\b/g, "didnt"],
  [/\bisn't\b/g, "isnt"],
  [/\baren't\b/g, "arent"],
  [/\bwasn't\b/g, "wasnt"],
  [/\bweren't\b/g, "werent"],
  [/\bdoesn't\b/g, "doesnt"],
  [/\bhasn't\b/g, "hasnt"],
  [/\bhaven't\b/g, "havent"]
]

const negations = new Set([
  "not",
  "no",
  "never",
  "cannot",
  "cant",
  "won't",
  "wont",
  "don't",
  "dont",
  "didn't",
  "didnt",
  "isn't",
  "isnt",
  "aren't",
  "arent",
  "wasn't",
  "wasnt",
  "weren't",
  "werent",
  "doesnt",
  "hasnt",
  "havent",
  "n't",
  "neither",
  "nor",
  "none",
  "without",
  "non",
  "deprecated",
  "disabled",
  "decommissioned",
  "revoked",
  "terminated",
  "blocked",
  "forbidden",
  "prohibited",
  "denied",
  "stopped",
  "quit",
  "left",
  "resigned",
  "retired",
  "ended",
  "cancelled",
  "abandoned",
  "removed",
  "deleted",
  "closed",
  "rejected",
  "former",
  "ex",
  "previously"
])

/** Words that carry no subject: sharing them says nothing about two statements being about the same thing. */
const stopwords = new Set([
  "the",
  "an",
  "at",
  "in",
  "on",
  "of",
  "to",
  "for",
  "and",
  "or",
  "is",
  "are",
  "was",
  "were",
  "be",
  "been",
  "being",
  "it",
  "its",
  "this",
  "that",
  "these",
  "those",
  "with",
  "as",
  "by",
  "from",
  "he",
  "she",
  "they",
  "we",
  "you",
  "my",
  "his",
  "her",
  "their",
  "our",
  "your",
  "me",
  "him",
  "them",
  "us",
  "do",
  "does",
  "did",
  "has",
  "have",
  "had",
  "will",
  "would",
  "so",
  "but",
  "just",
  "about",
  "also",
  "very",
  "really",
  "there",
  "here",
  "what",
  "when",
  "which",
  "who",
  "how",
  "then",
  "than",
  "into",
  "out",
  "up",
  "all",
  "any",
  "some",
  "more",
  "most",
  "can",
  "could",
  "should",
  "may",
  "might",
  "must",
  "im",
  "i'm",
  "ive",
  "i've",
  "it's",
  "that's",
  "yes",
  "oh",
  "too",
  "longer",
  "anymore",
  // Chat filler: greetings, praise and hedges that two turns share without being about the same thing.
  "wow",
  "hey",
  "hi",
  "hello",
  "thanks",
  "thank",
  "yeah",
  "yep",
  "ok",
  "okay",
  "cool",
  "awesome",
  "great",
  "nice",
  "good",
  "amazing",
  "glad",
  "sure",
  "totally",
  "definitely",
  "super",
  "lol",
  "haha",
  "sounds",
  "looks",
  "seems",
  "feel",
  "feels",
  "think",
  "know",
  "got",
  "get",
  "gonna",
  "wanna",
  "lot",
  "lots",
  "thing",
  "things",
  "stuff",
  "much",
  "many",
  "one",
  "like",
  "what's",
  "let's",
  "you're",
  "i'll",
  "i'd",
  "that",
  "way",
  "well",
  "even",
  "still",
  // Pronouns and light verbs: in chat they join any two turns.
  "anything",
  "something",
  "everything",
  "nothing",
  "someone",
  "anyone",
  "everyone",
  "let",
  "need",
  "want",
  "make",
  "go",
  "going",
  "come",
  "see",
  "say",
  "said",
  "tell",
  "take",
  "keep",
  "if",
  "because",
  "though",
  "back"
])

/** A name set off by a comma at the end of a clause ("No worries, Jon!"): who is spoken to, not the subject. */
const vocative = /,\s*\p{Lu}\p{L}+(?=\s*[,!?.])/gu

/**
 * Phrases whose negation asserts nothing negative: "can't wait" is eagerness, "don't give up" encouragement.
 * Measured on LoCoMo conversations, where these made most of the false contradictions.
 */
const idioms = new RegExp(
  "\\b(?:can'?t wait|cannot wait|(?:can'?t|couldn'?t) agree more|long time no (?:see|talk|chat)|" +
    "no matter|not only|not just|never mind|no (?:problem|worries|doubt)s?|why not|you never know|" +
    "(?:don'?t|do not|never|won'?t|will not|not) (?:give up|quit|stop|let (?:you|me|them|us) down))\\b",
  "giu"
)

/** The date notes the offline extractor appends ("[yesterday: 2024-05-01]") and a transcript's speaker label. */
const dateNote = /\s\[[^\]]*\]$/
const speakerLabel = /^[A-Z][\p{L}'.-]*(?:\s[A-Z][\p{L}'.-]*){0,3}:\s+/u

/** Lowercase tokens (`[a-z0-9_']+`, contractions folded) longer than one character. */
export const tokens = (text: string): Array<string> => {
  let lower = text.toLowerCase().replace(/[\u2018\u2019]/g, "'")
  for (const [pattern, replacement] of contractions) lower = lower.replace(pattern, replacement)
  return (lower.match(/[a-z0-9_']+/g) ?? []).map((token) => token.replace(/^'+|'+$/g, "")).filter((token) =>
    token.length > 1
  )
}

export const isNegated = (tokenList: ReadonlyArray<string>): boolean =>
  tokenList.some((token) => negations.has(token) || token.endsWith("n't"))

/** The words that say what a statement is about: no date note, no speaker label, no stopwords or negations. */
export const contentWords = (text: string, exclude: ReadonlySet<string> = new Set()): Set<string> =>
  new Set(
    tokens(text.replace(dateNote, "").replace(speakerLabel, ""))
      .filter((token) => !stopwords.has(token) && !negations.has(token) && !exclude.has(token))
  )

export interface Overlap {
  readonly shared: ReadonlyArray<string>
  /** Shared words over the smaller statement's content words: 1 when one statement's subject is inside the other. */
  readonly ratio: number
  /** Shared words over all content words of both (Jaccard). */
  readonly jaccard: number
}

export const overlap = (left: ReadonlySet<string>, right: ReadonlySet<string>): Overlap => {
  const shared = [...left].filter((word) => right.has(word)).sort()
  const smaller = Math.min(left.size, right.size)
  const union = left.size + right.size - shared.length
  return {
    shared,
    ratio: smaller === 0 ? 0 : shared.length / smaller,
    jaccard: union === 0 ? 0 : shared.length / union
  }
}

/** What a detector knows of one statement. */
export interface StatementSignals {
  readonly negated: boolean
  readonly words: ReadonlySet<string>
  readonly tokenCount: number
}

/**
 * Statements are judged against several neighbours in a batch (and again by later batches): their clauses are
 * cut once. Bounded, cleared when full.
 */
const clauseCache = new Map<string, Array<StatementSignals>>()

/** The statement cut into clauses (sentences, and parts around a dash or semicolon), idioms removed. */
export const clausesOf = (text: string): Array<StatementSignals> => {
  const cached = clauseCache.get(text)
  if (cached !== undefined) return cached
  const clauses = cutClauses(text)
  if (clauseCache.size > 20_000) clauseCache.clear()
  clauseCache.set(text, clauses)
  return clauses
}

const cutClauses = (text: string): Array<StatementSignals> =>
  text.replace(dateNote, "").replace(speakerLabel, "").replace(/[\u2018\u2019]/g, "'").replace(idioms, " ")
    .replace(vocative, "")
    .split(/(?<=[.!?;])\s+|\s[-\u2013\u2014]\s/u)
    // A question asserts nothing, so it cannot contradict anything.
    .filter((clause) => !clause.trim().endsWith("?"))
    .map((clause) => signalsOf(clause))
    .filter((clause) => clause.tokenCount > 0)

export interface ClauseMatch extends Overlap {
  /** Whether exactly one of the two best-matching clauses is negated. */
  readonly opposite: boolean
}

/** The pair of clauses, one from each statement, that share the most subject words (ties: the larger share). */
export const bestClauses = (
  left: string,
  right: string,
  exclude: ReadonlySet<string> = new Set()
): ClauseMatch | null => {
  let best: ClauseMatch | null = null
  const without = (words: ReadonlySet<string>) =>
    exclude.size === 0 ? words : new Set([...words].filter((w) => !exclude.has(w)))
  // Each clause's words once, not once per clause pair.
  const rights = clausesOf(right).map((b) => ({ negated: b.negated, words: without(b.words) }))
  for (const a of clausesOf(left)) {
    const words = without(a.words)
    for (const b of rights) {
      const shared = overlap(words, b.words)
      if (
        best === null || shared.shared.length > best.shared.length ||
        (shared.shared.length === best.shared.length && shared.ratio > best.ratio)
      ) {
        best = { ...shared, opposite: a.negated !== b.negated }
      }
    }
  }
  return best
}

/**
 * A whole statement's signals, cached like its clauses: every pair judged tokenises both sides, and a stored
 * statement is the neighbour of many new ones (measured: a third of retain's node CPU went to tokenising the
 * same texts again). Bounded, cleared when full.
 */
const signalsCache = new Map<string, StatementSignals>()

export const signalsOf = (text: string): StatementSignals => {
  const cached = signalsCache.get(text)
  if (cached !== undefined) return cached
  const all = tokens(text.replace(dateNote, ""))
  const signals = { negated: isNegated(all), words: contentWords(text), tokenCount: all.length }
  if (signalsCache.size > 20_000) signalsCache.clear()
  signalsCache.set(text, signals)
  return signals
}
