/**
 * The binary sections of a `.brain` payload: typed arrays stored as their little-endian bytes (never as JSON
 * numbers), string lists as one UTF-8 blob with offsets, and small structured parts as JSON. Each section starts on
 * an 8-byte boundary so a reader can view it in place. Pure: no I/O.
 */
import { runWhole, type Sliced } from "../Sliced.ts"

export type SectionKind = "i32" | "f32" | "f64" | "u8" | "strings" | "json" | "bytes"

export interface SectionEntry {
  readonly name: string
  readonly kind: SectionKind
  /** Byte offset from the start of the section area, and length in bytes. */
  readonly offset: number
  readonly length: number
  /** Elements (typed arrays, strings), for a reader's sanity checks. */
  readonly count: number
}

const align = (value: number) => (value + 7) & ~7
/** Bytes a sliced section copy writes per step. */
const copySliceBytes = 2 * 1024 * 1024
const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** Collects sections, then lays them out in one buffer. */
export class SectionWriter {
  private readonly parts: Array<{ name: string; kind: SectionKind; bytes: Uint8Array; count: number }> = []

  typed(name: string, array: Int32Array | Float32Array | Float64Array | Uint8Array): this {
    const kind: SectionKind = array instanceof Int32Array
      ? "i32"
      : array instanceof Float32Array
      ? "f32"
      : array instanceof Float64Array
      ? "f64"
      : "u8"
    // Typed arrays are in the platform's byte order; every platform Node runs on is little-endian.
    this.parts.push({
      name,
      kind,
      bytes: new Uint8Array(array.buffer, array.byteOffset, array.byteLength),
      count: array.length
    })
    return this
  }

  strings(name: string, values: ReadonlyArray<string>): this {
    const blob = encoder.encode(values.join(""))
    const offsets = new Int32Array(values.length + 1)
    // Byte offsets: for ASCII (every generated id) a string's byte length is its length; others are measured.
    if (blob.length === values.reduce((sum, value) => sum + value.length, 0)) {
      for (let i = 0; i < values.length; i++) offsets[i + 1] = offsets[i]! + values[i]!.length
    } else {
      for (let i = 0; i < values.length; i++) offsets[i + 1] = offsets[i]! + encoder.encode(values[i]!).length
    }
    const bytes = new Uint8Array(align(offsets.byteLength) + blob.length)
    bytes.set(new Uint8Array(offsets.buffer), 0)
    bytes.set(blob, align(offsets.byteLength))
    this.parts.push({ name, kind: "strings", bytes, count: values.length })
    return this
  }

  json(name: string, value: unknown): this {
    this.parts.push({ name, kind: "json", bytes: encoder.encode(JSON.stringify(value)), count: 1 })
    return this
  }

  bytes(name: string, value: Uint8Array): this {
    this.parts.push({ name, kind: "bytes", bytes: value, count: value.length })
    return this
  }

  /** The section table and the section area's size. */
  layout(): { readonly entries: ReadonlyArray<SectionEntry>; readonly size: number } {
    const entries: Array<SectionEntry> = []
    let size = 0
    for (const part of this.parts) {
      entries.push({ name: part.name, kind: part.kind, offset: size, length: part.bytes.length, count: part.count })
      size = align(size + part.bytes.length)
    }
    return { entries, size }
  }

  /**
   * Copies the sections into `target` from `at` on, as `layout` placed them (the gaps stay as they are: zeros in a
   * fresh buffer). Written straight into the file's buffer, a large brain is copied once, not once per layer.
   */
  copyInto(target: Uint8Array, at: number): void {
    runWhole(this.copyingInto(target, at))
  }

  /**
   * `copyInto` a few MiB per step (`Sliced.ts`): a 100k-memory bank's file (140 MiB: vectors 38, each graph edge array
   * 14) held the event loop for up to 0.39 s a section (the first write to each page of the new file is what costs).
   */
  *copyingInto(target: Uint8Array, at: number): Sliced<void> {
    const { entries } = this.layout()
    for (let i = 0; i < this.parts.length; i++) {
      const bytes = this.parts[i]!.bytes
      const start = at + entries[i]!.offset
      for (let from = 0; from < bytes.length; from += copySliceBytes) {
        target.set(bytes.subarray(from, from + copySliceBytes), start + from)
        yield
      }
    }
  }

  /** The section table and the section area. */
  finish(): { readonly entries: ReadonlyArray<SectionEntry>; readonly area: Uint8Array } {
    const { entries, size } = this.layout()
    const area = new Uint8Array(size)
    this.copyInto(area, 0)
    return { entries, area }
  }
}

export class SectionError extends Error {}

/** Reads sections out of a section area; every accessor checks kind, bounds and counts. */
export class SectionReader {
  private readonly byName: Map<string, SectionEntry>

  private readonly area: Uint8Array

  constructor(entries: ReadonlyArray<SectionEntry>, area: Uint8Array) {
    this.area = area
    this.byName = new Map(entries.map((entry) => [entry.name, entry]))
    for (const entry of entries) {
      if (!(entry.offset >= 0 && entry.length >= 0 && entry.offset + entry.length <= area.length)) {
        throw new SectionError(`section ${entry.name} lies outside the payload`)
      }
    }
  }

  has(name: string): boolean {
    return this.byName.has(name)
  }

  private entry(name: string, kind: SectionKind): SectionEntry {
    const entry = this.byName.get(name)
    if (entry === undefined) throw new SectionError(`section ${name} is missing`)
    if (entry.kind !== kind) throw new SectionError(`section ${name} is ${entry.kind}, expected ${kind}`)
    return entry
  }

  /** A copy, aligned for its element type (the area's own alignment is not guaranteed); `copying` at once. */
  private view(name: string, kind: SectionKind, width: number): ArrayBuffer {
    return runWhole(this.copying(name, kind, width))
  }

  /**
   * The section copied a few MiB per step: what a large copy costs is the first write to each page of the fresh
   * buffer (the typed sections of a 100k-memory file, 38 MiB of vectors and 14 MiB per graph edge array, held the
   * event loop for 0.3–0.6 s a step when each was copied in one piece).
   */
  private *copying(name: string, kind: SectionKind, width: number): Sliced<ArrayBuffer> {
    const entry = this.entry(name, kind)
    if (entry.length !== entry.count * width) throw new SectionError(`section ${name} has a wrong length`)
    const copy = new Uint8Array(entry.length)
    for (let at = 0; at < entry.length; at += copySliceBytes) {
      const end = Math.min(entry.length, at + copySliceBytes)
      copy.set(this.area.subarray(entry.offset + at, entry.offset + end), at)
      if (end < entry.length) yield
    }
    return copy.buffer
  }

  *i32Sliced(name: string): Sliced<Int32Array> {
    return new Int32Array(yield* this.copying(name, "i32", 4))
  }

  *f32Sliced(name: string): Sliced<Float32Array> {
    return new Float32Array(yield* this.copying(name, "f32", 4))
  }

  *f64Sliced(name: string): Sliced<Float64Array> {
    return new Float64Array(yield* this.copying(name, "f64", 8))
  }

  *u8Sliced(name: string): Sliced<Uint8Array> {
    return new Uint8Array(yield* this.copying(name, "u8", 1))
  }

  i32(name: string): Int32Array {
    return new Int32Array(this.view(name, "i32", 4))
  }

  f32(name: string): Float32Array {
    return new Float32Array(this.view(name, "f32", 4))
  }

  f64(name: string): Float64Array {
    return new Float64Array(this.view(name, "f64", 8))
  }

  u8(name: string): Uint8Array {
    return new Uint8Array(this.view(name, "u8", 1))
  }

  bytes(name: string): Uint8Array {
    const entry = this.entry(name, "bytes")
    return this.area.slice(entry.offset, entry.offset + entry.length)
  }

  json(name: string): unknown {
    const entry = this.entry(name, "json")
    try {
      return JSON.parse(decoder.decode(this.area.subarray(entry.offset, entry.offset + entry.length)))
    } catch {
      throw new SectionError(`section ${name} is not valid JSON`)
    }
  }

  strings(name: string): Array<string> {
    const entry = this.entry(name, "strings")
    const count = entry.count
    const tableBytes = (count + 1) * 4
    if (entry.length < tableBytes) throw new SectionError(`section ${name} is too short`)
    const offsets = new Int32Array(this.area.slice(entry.offset, entry.offset + tableBytes).buffer)
    const blobStart = entry.offset + align(tableBytes)
    const blobLength = entry.offset + entry.length - blobStart
    if (offsets[0] !== 0 || offsets[count] !== blobLength) throw new SectionError(`section ${name} has wrong offsets`)
    for (let i = 0; i < count; i++) {
      if (offsets[i + 1]! < offsets[i]!) throw new SectionError(`section ${name} has wrong offsets`)
    }
    const blob = this.area.subarray(blobStart, blobStart + blobLength)
    let text: string
    try {
      text = decoder.decode(blob)
    } catch {
      throw new SectionError(`section ${name} is not valid UTF-8`)
    }
    const values = new Array<string>(count)
    if (text.length === blobLength) {
      // All ASCII: byte offsets are string offsets, one decode serves every value.
      for (let i = 0; i < count; i++) values[i] = text.slice(offsets[i]!, offsets[i + 1]!)
    } else {
      for (let i = 0; i < count; i++) values[i] = decoder.decode(blob.subarray(offsets[i]!, offsets[i + 1]!))
    }
    return values
  }
}
