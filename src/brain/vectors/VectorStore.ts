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

/**
 * Vectors are held in pages of this many slots, and a full page is never copied: growing one contiguous array by
 * doubling copied every vector held and, at 100k vectors of 100 dimensions, allocated 80 MB at once, which made V8 run
 * a full collection of the heap on the spot — a 300 ms stall of the event loop on the first retain after a 100k brain
 * was loaded (`bench/isolation.ts` phase 9, stop 69), 145 ms in a bare process. A page itself starts small and doubles
 * until full (at most 800 KB copied at 100 dimensions), so a small bank's brain holds kilobytes, not a whole page.
 */
const pageBits = 11
const pageSlots = 1 << pageBits
const pageMask = pageSlots - 1

export class VectorStore {
  readonly dimensions: number
  private readonly pages: Array<Float32Array> = []
  private norms: Float64Array
  private present: Uint8Array
  private count = 0

  constructor(dimensions: number, capacity = 16) {
    this.dimensions = dimensions
    this.norms = new Float64Array(Math.max(1, capacity))
    this.present = new Uint8Array(Math.max(1, capacity))
  }

  /** Vectors held. */
  get size(): number {
    return this.count
  }

  get byteSize(): number {
    let vectors = 0
    for (const page of this.pages) vectors += page.byteLength
    return vectors + this.norms.byteLength + this.present.byteLength
  }

  has(slot: number): boolean {
    return slot < this.present.length && this.present[slot] === 1
  }

  /** The vector at `slot` (a view: copy it to keep it), or undefined. */
  get(slot: number): Float32Array | undefined {
    if (!this.has(slot)) return undefined
    const at = (slot & pageMask) * this.dimensions
    return this.pages[slot >>> pageBits]!.subarray(at, at + this.dimensions)
  }

  /** Stores `vector` at `slot`, or clears the slot when the vector is absent or of another dimension. */
  set(slot: number, vector: Float32Array | null): void {
    if (vector === null || vector.length !== this.dimensions) return this.clear(slot)
    this.reserve(slot + 1)
    this.pageHolding(slot).set(vector, (slot & pageMask) * this.dimensions)
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
    const page = this.pages[slot >>> pageBits]!
    return cosineOf(dotAt(query, page, (slot & pageMask) * this.dimensions, this.dimensions), queryNorm, norm)
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
    const { dimensions, norms, pages, present } = this
    // A slot scoring below the worst kept cannot enter: it is neither tested against the scope nor made an object
    // (at 100k vectors of 100 dimensions the scan took 16 ms with both done for every slot, 8.5–10 ms without).
    let worstKept = -Infinity
    for (let index = 0; index < pages.length; index++) {
      const page = pages[index]!
      const first = index << pageBits
      const end = Math.min(first + pageSlots, present.length)
      for (let slot = first, at = 0; slot < end; slot++, at += dimensions) {
        if (present[slot] === 0) continue
        const norm = norms[slot]!
        if (norm === 0) continue
        const score = cosineOf(dotAt(query, page, at, dimensions), queryNorm, norm)
        if (score < worstKept || !accept(slot)) continue
        keepBest(kept, { slot, score }, depth, better)
        if (kept.length === depth) worstKept = kept[depth - 1]!.score
      }
    }
    return kept
  }

  /** The held vectors in slot order with a presence mask, for a `.brain` file. */
  toParts(slots: number): { readonly data: Float32Array; readonly present: Uint8Array } {
    this.reserve(slots)
    const data = new Float32Array(slots * this.dimensions)
    for (let index = 0; index < this.pages.length && index << pageBits < slots; index++) {
      const take = Math.min(pageSlots, slots - (index << pageBits)) * this.dimensions
      data.set(this.pages[index]!.subarray(0, take), (index << pageBits) * this.dimensions)
    }
    return { data, present: this.present.slice(0, slots) }
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

  /** Room for `slots` vectors' norms and presence made at once, when a loader knows how many will come. */
  expect(slots: number): void {
    this.reserve(slots)
  }

  /** The page of `slot`, made or grown to hold it (a page doubles until it holds `pageSlots`). */
  private pageHolding(slot: number): Float32Array {
    const index = slot >>> pageBits
    while (this.pages.length <= index) this.pages.push(new Float32Array(0))
    const page = this.pages[index]!
    const needed = ((slot & pageMask) + 1) * this.dimensions
    if (page.length >= needed) return page
    const length = Math.min(pageSlots * this.dimensions, Math.max(needed, page.length * 2, 16 * this.dimensions))
    const larger = new Float32Array(length)
    larger.set(page)
    this.pages[index] = larger
    return larger
  }

  /** Grows the per-slot norms and presence (9 bytes a slot, so copying them is cheap); pages come as slots are set. */
  private reserve(slots: number): void {
    if (slots <= this.present.length) return
    const capacity = Math.max(slots, this.present.length * 2, 16)
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
