/**
 * A bank's full-text index in memory: for each lexeme (as PostgreSQL's `english` and `simple` configurations
 * produced it for `search_text`), the positions of the memories that contain it. BM25 over it costs a walk of
 * the query terms' posting lists instead of a scan of the bank, and document frequencies are exact. New
 * memories are appended in retain order; removals and edits need a rebuild (`KeywordIndexes` decides).
 */
import type { Candidate } from "../Candidates.ts"

export interface IndexedMemory {
  readonly id: string
  readonly seq: number
  readonly factType: string
  /** The memory's tags, for tag-scoped searches. */
  readonly tags: ReadonlyArray<string>
  /** The distinct lexemes of the memory's `search_text`. */
  readonly lexemes: ReadonlyArray<string>
}

export interface SearchOptions {
  readonly types: ReadonlyArray<string>
  readonly depth: number
  /** The request's tag scope (see `tagMatcher`); absent, every memory's tags qualify. */
  readonly tags?: ((tags: ReadonlyArray<string>) => boolean) | undefined
}

export interface QueryTerm {
  readonly lexeme: string
  /** 1 for the query's own words, lower for expansion terms. */
  readonly boost: number
}

/** BM25 constants, the same as the SQL strategy: k1 1.2, b 0.75, a term counting once per memory. */
const k1 = 1.2
const b = 0.75

export class KeywordIndex {
  readonly ids: Array<string> = []
  private readonly known = new Set<string>()
  private readonly lengths: Array<number> = []
  private readonly types: Array<string> = []
  /** Each memory's tags; memories with the same tags share one array, so a search judges each tag set once. */
  private readonly tagSets: Array<ReadonlyArray<string>> = []
  private readonly internedTags = new Map<string, ReadonlyArray<string>>()
  private readonly postings = new Map<string, Array<number>>()
  private totalLength = 0
  /** The highest `seq` indexed: the next append starts after it. */
  maxSeq = 0
  /** Scratch space reused across searches (one search runs at a time: they are synchronous). */
  private scores = new Float64Array(0)

  static build(memories: Iterable<IndexedMemory>): KeywordIndex {
    const index = new KeywordIndex()
    index.append(memories)
    return index
  }

  get size(): number {
    return this.ids.length
  }

  /** Adds memories not indexed yet (ids already indexed are skipped, so overlapping reads are harmless). */
  append(memories: Iterable<IndexedMemory>): void {
    for (const memory of memories) {
      if (this.known.has(memory.id)) continue
      this.known.add(memory.id)
      const position = this.ids.length
      this.ids.push(memory.id)
      this.types.push(memory.factType)
      this.tagSets.push(this.intern(memory.tags))
      this.lengths.push(memory.lexemes.length)
      this.totalLength += memory.lexemes.length
      for (const lexeme of memory.lexemes) {
        const list = this.postings.get(lexeme)
        if (list === undefined) this.postings.set(lexeme, [position])
        else list.push(position)
      }
      this.maxSeq = Math.max(this.maxSeq, memory.seq)
    }
  }

  private intern(tags: ReadonlyArray<string>): ReadonlyArray<string> {
    const key = JSON.stringify(tags)
    const known = this.internedTags.get(key)
    if (known !== undefined) return known
    this.internedTags.set(key, tags)
    return tags
  }

  /**
   * The best `depth` memories of the given types (and tag scope) for the terms, by BM25 (ties broken by id, like
   * the SQL). Document frequencies are the whole bank's, as in the SQL strategy.
   */
  search(terms: ReadonlyArray<QueryTerm>, options: SearchOptions): Array<Candidate> {
    const n = this.ids.length
    if (n === 0 || terms.length === 0) return []
    if (this.scores.length < n) this.scores = new Float64Array(Math.max(n, this.scores.length * 2))
    const scores = this.scores
    const averageLength = Math.max(1, this.totalLength / n)
    const allowed = new Set(options.types)
    const inScope = options.tags === undefined ? undefined : scopeCache(options.tags)
    const touched: Array<number> = []
    const seen = new Set<string>()
    for (const term of terms) {
      if (seen.has(term.lexeme)) continue
      seen.add(term.lexeme)
      const list = this.postings.get(term.lexeme)
      if (list === undefined) continue
      const df = list.length
      const idf = term.boost * Math.log(1 + (n - df + 0.5) / (df + 0.5))
      for (const position of list) {
        if (!allowed.has(this.types[position]!)) continue
        if (inScope !== undefined && !inScope(this.tagSets[position]!)) continue
        if (scores[position] === 0) touched.push(position)
        scores[position]! += idf * (k1 + 1) / (1 + k1 * (1 - b + b * this.lengths[position]! / averageLength))
      }
    }
    const best = topK(touched, options.depth, (position) => scores[position]!, (position) => this.ids[position]!)
    const candidates = best.map((position) => ({ id: this.ids[position]!, score: scores[position]! }))
    for (const position of touched) scores[position] = 0
    return candidates
  }

  /** Approximate bytes held, for metrics. */
  get byteSize(): number {
    let postings = 0
    for (const [lexeme, list] of this.postings) postings += lexeme.length * 2 + 8 * list.length + 64
    return postings + this.ids.length * (36 * 2 + 24)
  }
}

/** The tag scope's verdict per distinct tag set (they are interned), computed once per search. */
const scopeCache = (matches: (tags: ReadonlyArray<string>) => boolean) => {
  const verdicts = new Map<ReadonlyArray<string>, boolean>()
  return (tags: ReadonlyArray<string>) => {
    let verdict = verdicts.get(tags)
    if (verdict === undefined) {
      verdict = matches(tags)
      verdicts.set(tags, verdict)
    }
    return verdict
  }
}

/**
 * The k best positions, best first, without sorting every match: a common term can match half the bank, and
 * only a few dozen are wanted. Ties go to the smaller id, as in the SQL strategy.
 */
const topK = (
  positions: ReadonlyArray<number>,
  k: number,
  score: (position: number) => number,
  id: (position: number) => string
): Array<number> => {
  const better = (x: number, y: number) => {
    const difference = score(x) - score(y)
    return difference !== 0 ? difference > 0 : id(x) < id(y)
  }
  const kept: Array<number> = []
  for (const position of positions) {
    if (kept.length === k && !better(position, kept[k - 1]!)) continue
    let low = 0
    let high = kept.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (better(position, kept[middle]!)) high = middle
      else low = middle + 1
    }
    kept.splice(low, 0, position)
    if (kept.length > k) kept.pop()
  }
  return kept
}
