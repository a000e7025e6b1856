/**
 * The GloVe vocabulary, word ↔ row, kept as the cache file has it: the words' UTF-8 bytes, where each word starts,
 * and an open-addressing table of rows keyed by a hash of the bytes — about 9 MB for 341k words, where an array of
 * strings and a `Map` of them took about 30 MB of heap. It answers exactly as a `Map` filled in row order: the
 * same word twice resolves to its later row. It only reads; the bytes are never changed.
 */

/** What the tokenizer needs of a vocabulary (a `Map` from word to row qualifies too). */
export interface WordIndex {
  readonly get: (word: string) => number | undefined
  readonly has: (word: string) => boolean
}

const NEWLINE = 0x0a
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** FNV-1a over `bytes[start .. end)`. */
const hashOf = (bytes: Uint8Array, start: number, end: number): number => {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return hash >>> 0
}

export class GloveVocabulary implements WordIndex {
  /** Words (rows). */
  readonly size: number
  private readonly bytes: Uint8Array
  /** Word `row` is `bytes[starts[row] .. starts[row + 1] - 1)` (the last one has a virtual newline after it). */
  private readonly starts: Int32Array
  /** Row + 1 per slot, 0 when empty; a power of two at least twice the words. */
  private readonly slots: Int32Array
  private scratch = new Uint8Array(64)

  /**
   * The words joined by newlines, as UTF-8 (validated here; a byte-order mark at the start is not part of the first
   * word, as a decoder would drop it). Throws `RangeError` on invalid UTF-8.
   */
  constructor(joined: Uint8Array) {
    const bytes = joined[0] === 0xef && joined[1] === 0xbb && joined[2] === 0xbf ? joined.subarray(3) : joined
    decoder.decode(bytes)
    let size = 1
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) size++
    const starts = new Int32Array(size + 1)
    let row = 1
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) starts[row++] = i + 1
    starts[size] = bytes.length + 1
    let capacity = 16
    while (capacity < 2 * size) capacity *= 2
    this.size = size
    this.bytes = bytes
    this.starts = starts
    this.slots = new Int32Array(capacity)
    for (let row = 0; row < size; row++) this.insert(row)
  }

  /** The row of `word`, or undefined. */
  get(word: string): number | undefined {
    // A lone surrogate has no UTF-8 form: no word of a valid vocabulary is equal to it.
    if (!word.isWellFormed()) return undefined
    if (this.scratch.length < 3 * word.length) this.scratch = new Uint8Array(3 * word.length)
    const length = encoder.encodeInto(word, this.scratch).written
    const found = this.find(this.scratch, 0, length)
    return found < 0 ? undefined : found
  }

  has(word: string): boolean {
    return this.get(word) !== undefined
  }

  /** The word at `row`. */
  word(row: number): string {
    if (!(row >= 0 && row < this.size && Number.isInteger(row))) throw new RangeError(`GloveVocabulary: no row ${row}`)
    return decoder.decode(this.bytes.subarray(this.starts[row]!, this.starts[row + 1]! - 1))
  }

  /** Every word in row order (for tests and tools: it makes the strings this class exists to avoid). */
  words(): Array<string> {
    return Array.from({ length: this.size }, (_, row) => this.word(row))
  }

  /** Bytes held. */
  get byteSize(): number {
    return this.bytes.byteLength + this.starts.byteLength + this.slots.byteLength
  }

  private insert(row: number): void {
    const start = this.starts[row]!
    const end = this.starts[row + 1]! - 1
    const mask = this.slots.length - 1
    for (let slot = hashOf(this.bytes, start, end) & mask;; slot = (slot + 1) & mask) {
      const held = this.slots[slot]! - 1
      if (held < 0 || this.equals(held, this.bytes, start, end)) {
        this.slots[slot] = row + 1
        return
      }
    }
  }

  /** The row whose word is `query[start .. end)`, or -1. */
  private find(query: Uint8Array, start: number, end: number): number {
    const mask = this.slots.length - 1
    for (let slot = hashOf(query, start, end) & mask;; slot = (slot + 1) & mask) {
      const held = this.slots[slot]! - 1
      if (held < 0) return -1
      if (this.equals(held, query, start, end)) return held
    }
  }

  private equals(row: number, query: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[row]!
    if (this.starts[row + 1]! - 1 - from !== end - start) return false
    const { bytes } = this
    for (let i = 0; i < end - start; i++) if (bytes[from + i] !== query[start + i]) return false
    return true
  }
}
