/**
 * The binary layout of the converted GloVe table cached in `<dataDir>/models/`: a fixed header, the vocabulary
 * as UTF-8 lines, then float32 sections the loader views in place (no copy, no parse); the word vectors come last,
 * one fixed-size row per word, so a row can be read from the file alone (see `GloveRows`). Little-endian. A file that
 * does not match the layout exactly — wrong magic, another format version, a length that disagrees with the
 * header — is rejected as a whole; it is never partly trusted.
 *
 *     offset  size  field
 *     0       8     magic "ENGRGLOV"
 *     8       4     u32 format version
 *     12      4     u32 vocabulary size N (frequency order, most frequent first)
 *     16      4     u32 dimensions D
 *     20      4     u32 vocabulary bytes V (words joined by "\n")
 *     24      8     f64 SIF constant a the two directions were computed with
 *     32      8     f64 byte size of the source JSON (a changed package invalidates the cache)
 *     40      8     reserved (0)
 *     48      V     vocabulary, then zero padding to a multiple of 4
 *     …       4·N   float32 p(w), the estimated unigram probability of each word
 *     …       4·D   float32 common component of sentence vectors (unit)
 *     …       4·D   float32 least-used direction of sentence vectors (unit, orthogonal to the common one)
 *     …       4·N·D float32 word vectors, one row per word, as published (not normalised)
 */

import { GloveVocabulary } from "./GloveVocabulary.ts"

export const FORMAT_VERSION = 2
const MAGIC = "ENGRGLOV"
const HEADER_BYTES = 48

export interface GloveTableData {
  readonly words: ReadonlyArray<string>
  readonly dimensions: number
  readonly vectors: Float32Array
  readonly probabilities: Float32Array
  /** See `SifStatistics.sentenceDirections`. */
  readonly common: Float32Array
  readonly unused: Float32Array
  readonly sifA: number
  readonly sourceBytes: number
}

/** The cache file is not a complete table of this format version; the message says why. */
export class GloveCacheInvalid extends Error {
  override readonly name = "GloveCacheInvalid"
}

const bytesOf = (array: Float32Array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength)

/** The file as consecutive sections, so a writer can stream them without concatenating 140 MB. */
export const encode = (data: GloveTableData): ReadonlyArray<Uint8Array> => {
  const size = data.words.length
  const vocabulary = new TextEncoder().encode(data.words.join("\n"))
  const padding = (4 - ((HEADER_BYTES + vocabulary.length) % 4)) % 4
  const header = new Uint8Array(HEADER_BYTES)
  const view = new DataView(header.buffer)
  header.set(new TextEncoder().encode(MAGIC), 0)
  view.setUint32(8, FORMAT_VERSION, true)
  view.setUint32(12, size, true)
  view.setUint32(16, data.dimensions, true)
  view.setUint32(20, vocabulary.length, true)
  view.setFloat64(24, data.sifA, true)
  view.setFloat64(32, data.sourceBytes, true)
  return [
    header,
    vocabulary,
    new Uint8Array(padding),
    bytesOf(data.probabilities),
    bytesOf(data.common),
    bytesOf(data.unused),
    bytesOf(data.vectors)
  ]
}

/** Where everything sits in a cache file, from its header; see the layout above. */
export interface GloveCacheLayout {
  readonly size: number
  readonly dimensions: number
  readonly vocabularyBytes: number
  readonly sifA: number
  readonly sourceBytes: number
  /** Byte offsets of the float sections. */
  readonly probabilitiesAt: number
  readonly commonAt: number
  readonly unusedAt: number
  readonly vectorsAt: number
}

/** Bytes of the header, the part `readLayout` needs. */
export const headerBytes = HEADER_BYTES

/** The layout `header` (the file's first `headerBytes` bytes) describes, checked against the file's length. */
export const readLayout = (header: Uint8Array, fileBytes: number): GloveCacheLayout => {
  if (header.length < HEADER_BYTES || fileBytes < HEADER_BYTES) throw new GloveCacheInvalid("shorter than its header")
  if (new TextDecoder().decode(header.subarray(0, 8)) !== MAGIC) throw new GloveCacheInvalid("not a GloVe cache file")
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
  const version = view.getUint32(8, true)
  if (version !== FORMAT_VERSION) throw new GloveCacheInvalid(`format version ${version}, expected ${FORMAT_VERSION}`)
  const size = view.getUint32(12, true)
  const dimensions = view.getUint32(16, true)
  const vocabularyBytes = view.getUint32(20, true)
  const padding = (4 - ((HEADER_BYTES + vocabularyBytes) % 4)) % 4
  const probabilitiesAt = HEADER_BYTES + vocabularyBytes + padding
  const commonAt = probabilitiesAt + 4 * size
  const unusedAt = commonAt + 4 * dimensions
  const vectorsAt = unusedAt + 4 * dimensions
  const expected = vectorsAt + 4 * size * dimensions
  if (size === 0 || dimensions === 0 || fileBytes !== expected) {
    throw new GloveCacheInvalid(`${fileBytes} bytes where the header implies ${expected}`)
  }
  return {
    size,
    dimensions,
    vocabularyBytes,
    sifA: view.getFloat64(24, true),
    sourceBytes: view.getFloat64(32, true),
    probabilitiesAt,
    commonAt,
    unusedAt,
    vectorsAt
  }
}

/** Everything in a cache file but the word vectors. */
export interface GloveCacheHead {
  readonly vocabulary: GloveVocabulary
  readonly probabilities: Float32Array
  readonly common: Float32Array
  readonly unused: Float32Array
}

/**
 * Decodes the file's first `layout.vectorsAt` bytes or more (`bytes` starts at offset 0); the float sections are
 * views into `bytes` when it is 4-byte aligned (a copy otherwise).
 */
export const decodeHead = (bytes: Uint8Array, layout: GloveCacheLayout): GloveCacheHead => {
  if (bytes.length < layout.vectorsAt) throw new GloveCacheInvalid("shorter than its vocabulary and statistics")
  let vocabulary: GloveVocabulary
  try {
    vocabulary = new GloveVocabulary(bytes.subarray(HEADER_BYTES, HEADER_BYTES + layout.vocabularyBytes))
  } catch (error) {
    throw new GloveCacheInvalid(`vocabulary: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (vocabulary.size !== layout.size) {
    throw new GloveCacheInvalid(`${vocabulary.size} words where the header says ${layout.size}`)
  }
  const floats = (from: number, count: number) => floatsAt(bytes, from, count)
  return {
    vocabulary,
    probabilities: floats(layout.probabilitiesAt, layout.size),
    common: floats(layout.commonAt, layout.dimensions),
    unused: floats(layout.unusedAt, layout.dimensions)
  }
}

/** `count` little-endian float32 values at byte `from` of `bytes`: a view when aligned, else a copy. */
export const floatsAt = (bytes: Uint8Array, from: number, count: number): Float32Array =>
  (bytes.byteOffset + from) % 4 === 0
    ? new Float32Array(bytes.buffer, bytes.byteOffset + from, count)
    : new Float32Array(bytes.slice(from, from + 4 * count).buffer)
