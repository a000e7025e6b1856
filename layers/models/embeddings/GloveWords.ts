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
  /** How many of the most frequent words (those containing a letter) `nearest` searches. Default 50,000. */
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
  const limit = Math.min(options.poolSize ?? 50_000, vocabulary.size)
  const poolRows: Array<number> = []
  for (let row = 0; row < vocabulary.size && poolRows.length < limit; row++) {
    if (HAS_LETTER.test(vocabulary.word(row))) poolRows.push(row)
  }
  // Unit rows, so a neighbour search is one dot product per pool word (50k × 100 floats ≈ 20 MB).
  const pool = new Float32Array(poolRows.length * dimensions)
  poolRows.forEach((row, i) => {
    const unit = unitVector(vectors.row(row))
    pool.set(unit, i * dimensions)
  })

  const search = (query: Float32Array, k: number, exclude: number): Array<Neighbour> => {
    const unit = unitVector(query)
    const count = Math.max(0, Math.min(Math.floor(k), poolRows.length))
    const best: Array<{ row: number; similarity: number }> = []
    if (count === 0) return []
    for (let i = 0; i < poolRows.length; i++) {
      if (poolRows[i] === exclude) continue
      let similarity = 0
      const offset = i * dimensions
      for (let d = 0; d < dimensions; d++) similarity += pool[offset + d]! * unit[d]!
      if (best.length === count && similarity <= best[count - 1]!.similarity) continue
      let at = best.length === count ? count - 1 : best.length
      if (best.length === count) best.pop()
      while (at > 0 && best[at - 1]!.similarity < similarity) at--
      best.splice(at, 0, { row: poolRows[i]!, similarity })
    }
    return best.map(({ row, similarity }) => ({ word: vocabulary.word(row), similarity }))
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

const unitVector = (vector: Float32Array): Float32Array => {
  let norm = 0
  for (const value of vector) norm += value * value
  norm = Math.sqrt(norm) || 1
  return vector.map((value) => value / norm)
}
