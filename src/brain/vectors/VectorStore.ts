/**
 * The bank's embeddings in memory, one slot per memory (the slots of `MemoryRecords`), as pgvector stores them:
 * float32, unnormalised, with each vector's norm kept beside it so a cosine costs one dot product. Exact search scans
 * the slots a request may see and keeps the best `depth` by a bounded insertion — the same order as pgvector's exact
 * `ORDER BY embedding <=> query` (ties by id), which the parity tests hold it to.
 *
 * Only vectors of the service's current embedding model are held: a memory embedded by another model (before a
 * re-embedding finished) has none here, exactly as the SQL strategy's `embedding_model = …` condition leaves it out.
 */
import { compareIds } from "../../memory/recall/Candidates.ts"
import { keepBest } from "../KeepBest.ts"

export interface ScoredSlot {
  readonly slot: number
  readonly score: number
}

export class VectorStore {
  readonly dimensions: number
  private data: Float32Array
  private norms: Float64Array
  private present: Uint8Array
  private count = 0

  constructor(dimensions: number, capacity = 16) {
    this.dimensions = dimensions
    this.data = new Float32Array(Math.max(1, capacity) * dimensions)
    this.norms = new Float64Array(Math.max(1, capacity))
    this.present = new Uint8Array(Math.max(1, capacity))
  }

  /** Vectors held. */
  get size(): number {
    return this.count
  }

  get byteSize(): number {
    return this.data.byteLength + this.norms.byteLength + this.present.byteLength
  }

  has(slot: number): boolean {
    return slot < this.present.length && this.present[slot] === 1
  }

  /** The vector at `slot` (a view: copy it to keep it), or undefined. */
  get(slot: number): Float32Array | undefined {
    if (!this.has(slot)) return undefined
    return this.data.subarray(slot * this.dimensions, (slot + 1) * this.dimensions)
  }

  /** Stores `vector` at `slot`, or clears the slot when the vector is absent or of another dimension. */
  set(slot: number, vector: Float32Array | null): void {
    if (vector === null || vector.length !== this.dimensions) return this.clear(slot)
    this.reserve(slot + 1)
    this.data.set(vector, slot * this.dimensions)
    let norm = 0
    for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
    this.norms[slot] = Math.sqrt(norm)
    if (this.present[slot] === 0) this.count++
    this.present[slot] = 1
  }

  clear(slot: number): void {
    if (!this.has(slot)) return
    this.present[slot] = 0
    this.count--
  }

  /** pgvector's cosine similarity, `1 - (a <=> b)`: a zero vector is similar to nothing. */
  similarity(query: Float32Array, queryNorm: number, slot: number): number {
    const norm = this.norms[slot]!
    if (norm === 0 || queryNorm === 0) return Number.NaN
    return cosineOf(dotAt(query, this.data, slot * this.dimensions, this.dimensions), queryNorm, norm)
  }

  /**
   * The `depth` slots most similar to `query` among those `accept` lets through, best first (ties by id, as
   * `byScoreThenId` orders the SQL strategy's rows). Exact: every accepted slot is scored.
   */
  exactTop(
    query: Float32Array,
    depth: number,
    accept: (slot: number) => boolean,
    idOf: (slot: number) => string
  ): Array<ScoredSlot> {
    if (query.length !== this.dimensions || depth <= 0) return []
    const queryNorm = Math.sqrt(query.reduce((sum, x) => sum + x * x, 0))
    if (queryNorm === 0) return []
    const kept: Array<ScoredSlot> = []
    const better = (a: ScoredSlot, b: ScoredSlot) =>
      a.score > b.score || (a.score === b.score && compareIds(idOf(a.slot), idOf(b.slot)) < 0)
    const { data, dimensions, norms, present } = this
    const limit = Math.min(present.length, data.length / dimensions)
    // A slot scoring below the worst kept cannot enter: it is neither tested against the scope nor made an object
    // (at 100k vectors of 100 dimensions the scan took 16 ms with both done for every slot, 8.5–10 ms without).
    let worstKept = -Infinity
    for (let slot = 0; slot < limit; slot++) {
      if (present[slot] === 0) continue
      const norm = norms[slot]!
      if (norm === 0) continue
      const score = cosineOf(dotAt(query, data, slot * dimensions, dimensions), queryNorm, norm)
      if (score < worstKept || !accept(slot)) continue
      keepBest(kept, { slot, score }, depth, better)
      if (kept.length === depth) worstKept = kept[depth - 1]!.score
    }
    return kept
  }

  /** The held vectors in slot order with a presence mask, for a `.brain` file. */
  toParts(slots: number): { readonly data: Float32Array; readonly present: Uint8Array } {
    this.reserve(slots)
    return { data: this.data.slice(0, slots * this.dimensions), present: this.present.slice(0, slots) }
  }

  static fromParts(
    dimensions: number,
    parts: { readonly data: Float32Array; readonly present: Uint8Array }
  ): VectorStore {
    const slots = parts.present.length
    if (parts.data.length !== slots * dimensions) {
      throw new RangeError("VectorStore.fromParts: the vectors do not fit the slots")
    }
    const store = new VectorStore(dimensions, slots)
    for (let slot = 0; slot < slots; slot++) {
      if (parts.present[slot] === 1) store.set(slot, parts.data.subarray(slot * dimensions, (slot + 1) * dimensions))
    }
    return store
  }

  /** Room for `slots` vectors made at once, when a loader knows how many will come. */
  expect(slots: number): void {
    this.reserve(slots)
  }

  private reserve(slots: number): void {
    if (slots <= this.present.length) return
    const capacity = Math.max(slots, this.present.length * 2, 16)
    const data = new Float32Array(capacity * this.dimensions)
    data.set(this.data)
    this.data = data
    const norms = new Float64Array(capacity)
    norms.set(this.norms)
    this.norms = norms
    const present = new Uint8Array(capacity)
    present.set(this.present)
    this.present = present
  }
}

/**
 * The dot product of `query` with the vector at `at`: every score, scanned or through the index, is computed here,
 * in one order. (Four running sums measured no faster once the loop is compiled.)
 */
const dotAt = (query: Float32Array, data: Float32Array, at: number, dimensions: number): number => {
  let sum = 0
  for (let i = 0; i < dimensions; i++, at++) sum += query[i]! * data[at]!
  return sum
}

const cosineOf = (dot: number, queryNorm: number, norm: number): number => {
  const cosine = dot / (queryNorm * norm)
  return cosine > 1 ? 1 : cosine < -1 ? -1 : cosine
}
