/**
 * A bank's full-text index in memory: for each lexeme (as PostgreSQL's `english` and `simple` configurations
 * produced it for `search_text`), the positions of the memories that contain it. BM25 over it costs a walk of
 * the query terms' posting lists instead of a scan of the bank, and document frequencies are exact. New
 * memories are appended in retain order; a removed (or rewritten) memory is a tombstone that searches skip and
 * that no longer counts in document frequencies or lengths, so results equal those of a fresh build.
 * `compacted` drops the tombstones once they are a large share (see `BankBrains`).
 */
import type { Candidate } from "../../memory/recall/Candidates.ts"
import { every, runWhole, type Sliced } from "../Sliced.ts"
import { keepBest } from "../KeepBest.ts"

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
  /** Memories to skip: those expired but not yet swept (`MemoryRecords.expiredAt`). */
  readonly excluded?: ReadonlySet<string> | undefined
}

export interface QueryTerm {
  readonly lexeme: string
  /** 1 for the query's own words, lower for expansion terms. */
  readonly boost: number
}

/** A keyword index as flat arrays (see `KeywordIndex.toParts`): what a `.brain` file stores. */
export interface KeywordIndexParts {
  readonly ids: ReadonlyArray<string>
  readonly lengths: Int32Array
  readonly typeCodes: Uint8Array
  readonly typeNames: ReadonlyArray<string>
  readonly tagSetOf: Int32Array
  readonly tagSets: ReadonlyArray<ReadonlyArray<string>>
  readonly lexemes: ReadonlyArray<string>
  /** Lexeme `i`'s postings are `postingPositions[postingOffsets[i] .. postingOffsets[i + 1])`. */
  readonly postingOffsets: Int32Array
  readonly postingPositions: Int32Array
  /** Memory `p`'s lexeme numbers are `memoryLexemes[listStart[p] .. listStart[p + 1])`. */
  readonly listStart: Int32Array
  readonly memoryLexemes: Int32Array
  readonly maxSeq: number
}

/** BM25 constants, the same as the SQL strategy: k1 1.2, b 0.75, a term counting once per memory. */
const k1 = 1.2
const b = 0.75

/** A growable list of memory positions, in the order they were indexed. */
interface Postings {
  positions: Int32Array
  length: number
  /** Positions in the list whose memory was removed: the term's document frequency is `length - removed`. */
  removed: number
}

/**
 * The type code a removed memory gets: searches test `allowedTypes & (1 << code)`, and no type is ever given
 * this code, so the walk over a posting list skips tombstones without reading anything more.
 */
const removedCode = 31

/** A typed array of at least `room` slots keeping `array`'s contents: doubles when full. */
const ensureRoom = <A extends Int32Array | Uint8Array | Float64Array>(
  array: A,
  room: number,
  make: (length: number) => A
): A => {
  if (room <= array.length) return array
  const larger = make(Math.max(room, array.length * 2, 16))
  larger.set(array as never)
  return larger
}

/**
 * Per memory, everything a search reads sits in typed arrays indexed by position (type code, length, tag set
 * number), and postings are typed arrays too: a common term's list can hold a tenth of the bank, so the walk
 * over it must not chase a pointer or hash a string per memory.
 */
export class KeywordIndex {
  readonly ids: Array<string> = []
  /** The position of each live memory. */
  private readonly positionOf = new Map<string, number>()
  /** Each id's order key (see `idOrderKey`), so ties in score are broken without comparing strings. */
  private idKeys = new Float64Array(0)
  private lengths = new Int32Array(0)
  /** Each memory's fact type as a code into `typeNames`. */
  private typeCodes = new Uint8Array(0)
  private readonly typeNames: Array<string> = []
  /** Each memory's tags as a number into `tagSets`: memories with the same tags share one, judged once a search. */
  private tagSetOf = new Int32Array(0)
  private readonly tagSets: Array<ReadonlyArray<string>> = []
  private readonly tagSetNumbers = new Map<string, number>()
  private readonly postings = new Map<string, Postings>()
  /** Each memory's posting lists (`listStart[p] .. listStart[p + 1]` in `lists`), to retire it on removal. */
  private readonly lists: Array<Postings> = []
  private listStart = new Int32Array(1)
  private totalLength = 0
  private removedCount = 0
  /** The highest `seq` indexed: the next append starts after it. */
  maxSeq = 0
  /** Scratch space reused across searches (one search runs at a time: they are synchronous). */
  private scores = new Float64Array(0)
  private touched = new Int32Array(0)

  static build(memories: Iterable<IndexedMemory>): KeywordIndex {
    const index = new KeywordIndex()
    index.append(memories)
    return index
  }

  /** Live memories. */
  get size(): number {
    return this.ids.length - this.removedCount
  }

  /** Positions held by removed memories, until `compacted`. */
  get tombstones(): number {
    return this.removedCount
  }

  has(id: string): boolean {
    return this.positionOf.has(id)
  }

  /** Adds memories not indexed yet (ids already indexed are skipped, so overlapping reads are harmless). */
  append(memories: Iterable<IndexedMemory>): void {
    for (const memory of memories) {
      if (this.positionOf.has(memory.id)) continue
      const position = this.ids.length
      this.positionOf.set(memory.id, position)
      this.ids.push(memory.id)
      this.reserve(position + 1)
      this.idKeys[position] = idOrderKey(memory.id)
      this.typeCodes[position] = this.typeCode(memory.factType)
      this.tagSetOf[position] = this.tagSetNumber(memory.tags)
      this.lengths[position] = memory.lexemes.length
      this.totalLength += memory.lexemes.length
      for (const lexeme of memory.lexemes) {
        let list = this.postings.get(lexeme)
        if (list === undefined) {
          list = { positions: new Int32Array(4), length: 0, removed: 0 }
          this.postings.set(lexeme, list)
        }
        list.positions = ensureRoom(list.positions, list.length + 1, (length) => new Int32Array(length))
        list.positions[list.length++] = position
        this.lists.push(list)
      }
      this.listStart[position + 1] = this.lists.length
      this.maxSeq = Math.max(this.maxSeq, memory.seq)
    }
  }

  /**
   * Retires a memory (removed, or about to be appended again with new text): its position stays in the posting
   * lists but no search matches it and it no longer counts in the bank's statistics. False when not indexed.
   */
  remove(id: string): boolean {
    const position = this.positionOf.get(id)
    if (position === undefined) return false
    this.positionOf.delete(id)
    this.typeCodes[position] = removedCode
    this.totalLength -= this.lengths[position]!
    for (let i = this.listStart[position]!; i < this.listStart[position + 1]!; i++) this.lists[i]!.removed++
    this.removedCount++
    return true
  }

  /** The same live memories without tombstones, in the same order (results are unchanged). */
  compacted(): KeywordIndex {
    return runWhole(this.compacting())
  }

  /** `compacted` in slices of 2,000 memories (`Sliced.ts`): 0.7 s in one piece at 100k memories. */
  *compacting(): Sliced<KeywordIndex> {
    const index = new KeywordIndex()
    const lexemesOf = new Map<Postings, string>()
    for (const [lexeme, list] of this.postings) lexemesOf.set(list, lexeme)
    yield
    let live: Array<IndexedMemory> = []
    for (let position = 0; position < this.ids.length; position++) {
      if (this.typeCodes[position] === removedCode) continue
      const lexemes: Array<string> = []
      for (let i = this.listStart[position]!; i < this.listStart[position + 1]!; i++) {
        lexemes.push(lexemesOf.get(this.lists[i]!)!)
      }
      live.push({
        id: this.ids[position]!,
        seq: 0,
        factType: this.typeNames[this.typeCodes[position]!]!,
        tags: this.tagSets[this.tagSetOf[position]!]!,
        lexemes
      })
      if (live.length === 2_000) {
        index.append(live)
        live = []
        yield
      }
    }
    index.append(live)
    index.maxSeq = this.maxSeq
    return index
  }

  /**
   * The index as flat arrays, for the `.brain` file: tombstones are compacted away first, so positions are dense.
   * `fromParts` installs them as they are, with no re-indexing (the first recall after an import builds nothing).
   */
  toParts(): KeywordIndexParts {
    return runWhole(this.toPartsSliced())
  }

  /**
   * `toParts` in slices (`Sliced.ts`): a brain kept to its file after a retention sweep of a 100k bank compacted and
   * flattened its index in one piece, 110 ms of the event loop (`bench/isolation.ts` phase 12, stop 69). The index
   * must not change until it ends (the brain's lock holds catch-ups off).
   */
  *toPartsSliced(): Sliced<KeywordIndexParts> {
    const index = this.removedCount > 0 ? yield* this.compacting() : this
    const count = index.ids.length
    const tick = every(16_384)
    const lexemes: Array<string> = []
    const numberOf = new Map<Postings, number>()
    const postingOffsets = new Int32Array(index.postings.size + 1)
    let total = 0
    for (const list of index.postings.values()) total += list.length
    const postingPositions = new Int32Array(total)
    let write = 0
    for (const [lexeme, list] of index.postings) {
      numberOf.set(list, lexemes.length)
      lexemes.push(lexeme)
      postingPositions.set(list.positions.subarray(0, list.length), write)
      write += list.length
      postingOffsets[lexemes.length] = write
      if (tick(1 + (list.length >> 4))) yield
    }
    const memoryLexemes = new Int32Array(index.lists.length)
    for (let i = 0; i < index.lists.length; i++) {
      memoryLexemes[i] = numberOf.get(index.lists[i]!)!
      if (tick()) yield
    }
    return {
      ids: index.ids,
      lengths: index.lengths.slice(0, count),
      typeCodes: index.typeCodes.slice(0, count),
      typeNames: index.typeNames,
      tagSetOf: index.tagSetOf.slice(0, count),
      tagSets: index.tagSets,
      lexemes,
      postingOffsets,
      postingPositions,
      listStart: index.listStart.slice(0, count + 1),
      memoryLexemes,
      maxSeq: index.maxSeq
    }
  }

  /** The index `toParts` described; throws a RangeError when the parts do not fit together. */
  static fromParts(parts: KeywordIndexParts): KeywordIndex {
    return runWhole(KeywordIndex.fromPartsSliced(parts))
  }

  /**
   * `fromParts` in slices (`Sliced.ts`): a kept `.brain` file's index of a 10k-memory bank took 30-45 ms in one piece
   * (a CPU profile of a server loading three banks' files under fifty clients), ten times that at 100k.
   */
  static *fromPartsSliced(parts: KeywordIndexParts): Sliced<KeywordIndex> {
    const index = new KeywordIndex()
    const tick = every(16_384)
    const count = parts.ids.length
    const lexemeCount = parts.lexemes.length
    if (
      parts.lengths.length !== count || parts.typeCodes.length !== count || parts.tagSetOf.length !== count ||
      parts.listStart.length !== count + 1 || parts.postingOffsets.length !== lexemeCount + 1 ||
      parts.postingOffsets[lexemeCount] !== parts.postingPositions.length ||
      parts.listStart[count] !== parts.memoryLexemes.length || parts.typeNames.length >= removedCode
    ) throw new RangeError("KeywordIndex.fromParts: the parts do not fit together")
    for (const position of parts.postingPositions) {
      if (!(position >= 0 && position < count)) {
        throw new RangeError("KeywordIndex.fromParts: a posting is out of range")
      }
      if (tick()) yield
    }
    for (const number of parts.memoryLexemes) {
      if (!(number >= 0 && number < lexemeCount)) {
        throw new RangeError("KeywordIndex.fromParts: a lexeme is out of range")
      }
      if (tick()) yield
    }
    index.typeNames.push(...parts.typeNames)
    for (const tags of parts.tagSets) {
      index.tagSetNumbers.set(JSON.stringify(tags), index.tagSets.length)
      index.tagSets.push(tags)
    }
    const lists: Array<Postings> = []
    for (let number = 0; number < lexemeCount; number++) {
      const start = parts.postingOffsets[number]!
      const end = parts.postingOffsets[number + 1]!
      if (end < start) throw new RangeError("KeywordIndex.fromParts: posting offsets go back")
      const list = { positions: parts.postingPositions.slice(start, end), length: end - start, removed: 0 }
      lists.push(list)
      index.postings.set(parts.lexemes[number]!, list)
      if (tick(8)) yield
    }
    for (const number of parts.memoryLexemes) {
      index.lists.push(lists[number]!)
      if (tick()) yield
    }
    index.reserve(count)
    index.lengths.set(parts.lengths)
    index.typeCodes.set(parts.typeCodes)
    index.tagSetOf.set(parts.tagSetOf)
    index.listStart.set(parts.listStart)
    for (let position = 0; position < count; position++) {
      const id = parts.ids[position]!
      const code = parts.typeCodes[position]!
      const tagSet = parts.tagSetOf[position]!
      if (
        code >= parts.typeNames.length || !(tagSet >= 0 && tagSet < parts.tagSets.length) || index.positionOf.has(id)
      ) {
        throw new RangeError("KeywordIndex.fromParts: a memory's type, tags or id is invalid")
      }
      index.positionOf.set(id, position)
      index.ids.push(id)
      index.idKeys[position] = idOrderKey(id)
      index.totalLength += parts.lengths[position]!
      if (tick(16)) yield
    }
    index.maxSeq = parts.maxSeq
    return index
  }

  /** Grows every per-memory array to hold at least `count` memories. */
  private reserve(count: number): void {
    this.idKeys = ensureRoom(this.idKeys, count, (length) => new Float64Array(length))
    this.lengths = ensureRoom(this.lengths, count, (length) => new Int32Array(length))
    this.typeCodes = ensureRoom(this.typeCodes, count, (length) => new Uint8Array(length))
    this.tagSetOf = ensureRoom(this.tagSetOf, count, (length) => new Int32Array(length))
    this.listStart = ensureRoom(this.listStart, count + 1, (length) => new Int32Array(length))
  }

  private typeCode(factType: string): number {
    let code = this.typeNames.indexOf(factType)
    if (code < 0) {
      code = this.typeNames.length
      if (code >= removedCode) throw new RangeError("KeywordIndex: too many fact types")
      this.typeNames.push(factType)
    }
    return code
  }

  private tagSetNumber(tags: ReadonlyArray<string>): number {
    const key = JSON.stringify(tags)
    let number = this.tagSetNumbers.get(key)
    if (number === undefined) {
      number = this.tagSets.length
      this.tagSets.push(tags)
      this.tagSetNumbers.set(key, number)
    }
    return number
  }

  /**
   * The best `depth` memories of the given types (and tag scope) for the terms, by BM25 (ties broken by id, like
   * the SQL). Document frequencies are the whole bank's, as in the SQL strategy.
   */
  search(terms: ReadonlyArray<QueryTerm>, options: SearchOptions): Array<Candidate> {
    const n = this.size
    if (n === 0 || terms.length === 0) return []
    if (this.scores.length < this.ids.length) {
      this.scores = new Float64Array(Math.max(this.ids.length, this.scores.length * 2))
      this.touched = new Int32Array(this.scores.length)
    }
    const { scores, touched, typeCodes, lengths, tagSetOf } = this
    const averageLength = Math.max(1, this.totalLength / n)
    let allowedTypes = 0
    for (const type of options.types) {
      const code = this.typeNames.indexOf(type)
      if (code >= 0) allowedTypes |= 1 << code
    }
    const verdicts = this.tagVerdicts(options.tags)
    const { excluded } = options
    const ids = this.ids
    let touchedCount = 0
    const seen = new Set<string>()
    for (const term of terms) {
      if (seen.has(term.lexeme)) continue
      seen.add(term.lexeme)
      const list = this.postings.get(term.lexeme)
      if (list === undefined) continue
      const df = list.length - list.removed
      if (df === 0) continue
      const weight = term.boost * Math.log(1 + (n - df + 0.5) / (df + 0.5)) * (k1 + 1)
      const positions = list.positions
      for (let i = 0; i < list.length; i++) {
        const position = positions[i]!
        if ((allowedTypes & (1 << typeCodes[position]!)) === 0) continue
        if (verdicts !== undefined && verdicts[tagSetOf[position]!] === 0) continue
        if (excluded !== undefined && excluded.has(ids[position]!)) continue
        if (scores[position] === 0) touched[touchedCount++] = position
        scores[position]! += weight / (1 + k1 * (1 - b + b * lengths[position]! / averageLength))
      }
    }
    const best = topK(touched, touchedCount, options.depth, scores, this.idKeys, this.ids)
    const candidates = best.map((position) => ({ id: this.ids[position]!, score: scores[position]! }))
    for (let i = 0; i < touchedCount; i++) scores[touched[i]!] = 0
    return candidates
  }

  /** The tag scope's verdict per tag set (1 in scope, 0 not), or undefined when every memory qualifies. */
  private tagVerdicts(matches: SearchOptions["tags"]): Uint8Array | undefined {
    if (matches === undefined) return undefined
    const verdicts = new Uint8Array(this.tagSets.length)
    for (let number = 0; number < this.tagSets.length; number++) {
      verdicts[number] = matches(this.tagSets[number]!)
        ? 1
        : 0
    }
    return verdicts
  }

  /** Approximate bytes held, for metrics. */
  get byteSize(): number {
    let postings = 0
    for (const [lexeme, list] of this.postings) postings += lexeme.length * 2 + list.positions.byteLength + 64
    const perMemory = this.idKeys.byteLength + this.lengths.byteLength + this.typeCodes.byteLength +
      this.tagSetOf.byteLength + this.listStart.byteLength
    return postings + this.ids.length * (36 * 2 + 24) + perMemory + this.lists.length * 8
  }
}

const uuidPrefix = /^[0-9a-f]{8}-[0-9a-f]{4}/

/**
 * A number that orders ids as their strings do, as far as it tells them apart: the first 48 bits of a UUID in
 * canonical lowercase form (hex digits order like their values), exact in a float64. Any other id gets -1 and is
 * compared as a string, as are two UUIDs whose first 48 bits agree.
 */
const idOrderKey = (id: string): number =>
  uuidPrefix.test(id) ? parseInt(id.slice(0, 8), 16) * 65536 + parseInt(id.slice(9, 13), 16) : -1

/**
 * The k best of the first `count` positions, best first, without sorting every match: a common term can match
 * half the bank, and only a few dozen are wanted. Ties go to the smaller id, as in the SQL strategy.
 */
const topK = (
  positions: Int32Array,
  count: number,
  k: number,
  scores: Float64Array,
  idKeys: Float64Array,
  ids: ReadonlyArray<string>
): Array<number> => {
  const better = (x: number, y: number) => {
    const difference = scores[x]! - scores[y]!
    if (difference !== 0) return difference > 0
    const kx = idKeys[x]!
    const ky = idKeys[y]!
    return kx !== ky && kx >= 0 && ky >= 0 ? kx < ky : ids[x]! < ids[y]!
  }
  const kept: Array<number> = []
  for (let i = 0; i < count; i++) keepBest(kept, positions[i]!, k, better)
  return kept
}
