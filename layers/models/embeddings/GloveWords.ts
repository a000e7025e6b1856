/**
 * Word-level GloVe semantics for features such as recall's query expansion: a word's vector and its nearest
 * neighbours by cosine among the most frequent words. The lookups are synchronous on purpose — pure reads of an
 * immutable in-memory table, called per query word in tight loops — so they return values, not effects.
 */
import { Context, Effect, Layer, Option } from "effect"
import { GloveTable } from "./GloveTable.ts"
import { normalise } from "./GloveTokenizer.ts"

export interface Neighbour {
  readonly word: string
  /** Cosine similarity of the published vectors, in [-1, 1]. */
  readonly similarity: number
}

export interface GloveWordsOptions {
  /**
   * How many of the most frequent words (those containing a letter) `nearest` searches. Default 32,768: about the
   * table's resident rows, so the pool costs no copy. 50,000 (the default before stop 62) gave the same LoCoMo figures
   * within run-to-run noise, held 6.6 MiB more, and scanned 1.5 × as many words for each new query word.
   */
  readonly poolSize?: number | undefined
}

export class GloveWords extends Context.Service<GloveWords, {
  readonly dimensions: number
  /** The word's vector (a copy, not normalised); the word is lowercased and accent-folded first. */
  readonly vector: (word: string) => Option.Option<Float32Array>
  /** The `k` nearest pool words to `word`, most similar first, never the word itself; empty when it is unknown. */
  readonly nearest: (word: string, k: number) => ReadonlyArray<Neighbour>
  /** The `k` nearest pool words to any vector of the table's dimension (e.g. a sum of word vectors). */
  readonly nearestTo: (vector: Float32Array, k: number) => ReadonlyArray<Neighbour>
}>()("engram/models/embeddings/GloveWords") {
  static readonly layer = (options: GloveWordsOptions = {}): Layer.Layer<GloveWords, never, GloveTable> =>
    Layer.effect(GloveWords, make(options))
}

const HAS_LETTER = /\p{L}/u

export const make = Effect.fnUntraced(function*(options: GloveWordsOptions) {
  const table = yield* GloveTable
  const { dimensions, vectors, vocabulary } = table
  const limit = Math.min(options.poolSize ?? 32_768, vocabulary.size)
  const poolRows: Array<number> = []
  for (let row = 0; row < vocabulary.size && poolRows.length < limit; row++) {
    if (HAS_LETTER.test(vocabulary.word(row))) poolRows.push(row)
  }
  // Pool rows among the table's resident ones (all but a few hundred of the default pool) are read where they lie,
  // each with its norm; only the others are copied, as unit vectors. A unit copy of a whole 50,000-word pool
  // (20 MB) held 15 MB more after a GC, 30-50 MiB more of a fresh server's resident memory, and took twice as long
  // to build (270 ms against 140).
  const resident = vectors.residentVectors
  let residentPool = 0
  while (residentPool < poolRows.length && poolRows[residentPool]! < vectors.residentRows) residentPool++
  const norms = new Float64Array(residentPool)
  for (let i = 0; i < residentPool; i++) norms[i] = normOf(resident, poolRows[i]! * dimensions, dimensions)
  const copied = new Float32Array((poolRows.length - residentPool) * dimensions)
  for (let i = residentPool; i < poolRows.length;) {
    // One read per block of rows, past the remembered rows: the pool must not evict the rows texts use.
    const from = poolRows[i]!
    const to = Math.min(vectors.size, from + readBlockRows)
    const block = vectors.readRows(from, to)
    for (; i < poolRows.length && poolRows[i]! < to; i++) {
      const offset = (poolRows[i]! - from) * dimensions
      copied.set(unitVector(block.subarray(offset, offset + dimensions)), (i - residentPool) * dimensions)
    }
  }

  /** The cosine of pool word `i` with `unit`, exactly as a dot product with its unit vector. */
  const exactSimilarity = (i: number, unit: Float32Array): number => {
    let similarity = 0
    if (i < residentPool) {
      const offset = poolRows[i]! * dimensions
      const norm = norms[i]!
      // Rounded to float32 as the unit copy was, so scores (and ties) are those of the published unit vectors.
      for (let d = 0; d < dimensions; d++) similarity += Math.fround(resident[offset + d]! / norm) * unit[d]!
    } else {
      const offset = (i - residentPool) * dimensions
      for (let d = 0; d < dimensions; d++) similarity += copied[offset + d]! * unit[d]!
    }
    return similarity
  }

  /**
   * The scan scores a resident row as its dot product over its norm, as fast as the unit copy was (5.2 ms a word
   * against 5.4); dividing every value as `exactSimilarity` does doubled a scan. The two scores can part in the eighth digit, so
   * the scan keeps a few more than asked and scores those exactly: the answer is the unit copy's to the bit, words,
   * order and similarities (13,480 lookups compared, none differed).
   */
  const search = (query: Float32Array, k: number, exclude: number): Array<Neighbour> => {
    const unit = unitVector(query)
    const count = Math.max(0, Math.min(Math.floor(k), poolRows.length))
    if (count === 0) return []
    const keep = count + rescoredMargin
    const best: Array<{ i: number; similarity: number }> = []
    for (let i = 0; i < poolRows.length; i++) {
      if (poolRows[i] === exclude) continue
      let similarity = 0
      if (i < residentPool) {
        const offset = poolRows[i]! * dimensions
        for (let d = 0; d < dimensions; d++) similarity += resident[offset + d]! * unit[d]!
        similarity /= norms[i]!
      } else {
        const offset = (i - residentPool) * dimensions
        for (let d = 0; d < dimensions; d++) similarity += copied[offset + d]! * unit[d]!
      }
      if (best.length === keep && similarity <= best[keep - 1]!.similarity) continue
      let at = best.length === keep ? keep - 1 : best.length
      if (best.length === keep) best.pop()
      while (at > 0 && best[at - 1]!.similarity < similarity) at--
      best.splice(at, 0, { i, similarity })
    }
    // Equal scores keep the pool's (frequency) order, as the scan does.
    return best
      .map(({ i }) => ({ i, similarity: exactSimilarity(i, unit) }))
      .sort((a, b) => b.similarity - a.similarity || a.i - b.i)
      .slice(0, count)
      .map(({ i, similarity }) => ({ word: vocabulary.word(poolRows[i]!), similarity }))
  }

  const recentNeighbours = new Map<string, ReadonlyArray<Neighbour>>()
  const rowOf = (word: string) => vocabulary.get(normalise(word).trim())

  return GloveWords.of({
    dimensions,
    vector: (word) => {
      const row = rowOf(word)
      return row === undefined
        ? Option.none()
        : Option.some(vectors.row(row).slice())
    },
    nearest: (word, k) => {
      const row = rowOf(word)
      if (row === undefined) return []
      const key = `${k}:${row}`
      const cached = recentNeighbours.get(key)
      if (cached !== undefined) return cached
      const found = search(vectors.row(row), k, row)
      // A full scan of the pool costs milliseconds, and an agent's queries reuse the same words all day.
      if (recentNeighbours.size >= neighbourCacheSize) recentNeighbours.delete(recentNeighbours.keys().next().value!)
      recentNeighbours.set(key, found)
      return found
    },
    nearestTo: (vector, k) => vector.length === dimensions ? search(vector, k, -1) : []
  })
})

/** Words whose neighbours are remembered (oldest forgotten first): about 1 MB. */
const neighbourCacheSize = 10_000

/** Candidates scored exactly beyond the `k` asked for; the scan's scores differ from the exact ones by about 1e-8. */
const rescoredMargin = 8

/** Rows read from the cache file at once while copying the pool: 1.6 MB. */
const readBlockRows = 4096

const normOf = (values: Float32Array, offset: number, length: number): number => {
  let norm = 0
  for (let d = 0; d < length; d++) norm += values[offset + d]! * values[offset + d]!
  return Math.sqrt(norm) || 1
}

const unitVector = (vector: Float32Array): Float32Array => {
  const norm = normOf(vector, 0, vector.length)
  return vector.map((value) => value / norm)
}
