/**
 * The word vectors of a GloVe cache file, row by row: the most frequent words' rows stay in memory, any other row
 * is read from the open file when asked (and the last few thousand such rows are remembered). Words are in
 * frequency order, so a few tens of thousands of rows cover nearly every word of ordinary text, while the whole
 * table (341k rows, 134 MiB) would sit in the server's memory for words it almost never sees. The values are the
 * file's, bit for bit, wherever they come from. It never writes the file; the owner closes it.
 */
import { readSync } from "node:fs"
import { floatsAt } from "./GloveCacheFormat.ts"

export class GloveRows {
  readonly dimensions: number
  /** Rows in the table. */
  readonly size: number
  private readonly fd: number
  private readonly vectorsAt: number
  private readonly resident: Float32Array
  private readonly recentLimit: number
  private readonly recent = new Map<number, Float32Array>()

  /**
   * `resident` holds rows `0 .. resident.length / dimensions`; `fd` is the cache file open for reading, its word
   * vectors starting at byte `vectorsAt`; up to `recentLimit` other rows are remembered once read.
   */
  constructor(options: {
    readonly fd: number
    readonly vectorsAt: number
    readonly dimensions: number
    readonly size: number
    readonly resident: Float32Array
    readonly recentLimit: number
  }) {
    this.fd = options.fd
    this.vectorsAt = options.vectorsAt
    this.dimensions = options.dimensions
    this.size = options.size
    this.resident = options.resident
    this.recentLimit = options.recentLimit
  }

  /** Rows kept in memory for good. */
  get residentRows(): number {
    return this.resident.length / this.dimensions
  }

  /** The resident rows themselves, row-major (row `r` at `r * dimensions`). Shared: never write to it. */
  get residentVectors(): Float32Array {
    return this.resident
  }

  /**
   * Rows `from` up to `to` (excluded), row-major, read from the file without remembering them: for one pass over many
   * rows, which would otherwise push the rows texts use out of the remembered ones.
   */
  readRows(from: number, to: number): Float32Array {
    if (!(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from <= to && to <= this.size)) {
      throw new RangeError(`GloveRows: no rows ${from}..${to}`)
    }
    const bytes = new Uint8Array(4 * this.dimensions * (to - from))
    let done = 0
    while (done < bytes.length) {
      const read = readSync(
        this.fd,
        bytes,
        done,
        bytes.length - done,
        this.vectorsAt + 4 * this.dimensions * from + done
      )
      if (read === 0) throw new Error(`GloveRows: the file ends inside rows ${from}..${to}`)
      done += read
    }
    return floatsAt(bytes, 0, this.dimensions * (to - from))
  }

  /** Bytes held: the resident rows and the remembered ones. */
  get byteSize(): number {
    return this.resident.byteLength + this.recent.size * this.dimensions * 4
  }

  /** The row's vector, as published. Shared: never write to it. */
  row(row: number): Float32Array {
    const { dimensions } = this
    if (!(row >= 0 && row < this.size && Number.isInteger(row))) throw new RangeError(`GloveRows: no row ${row}`)
    if (row < this.residentRows) return this.resident.subarray(row * dimensions, (row + 1) * dimensions)
    const known = this.recent.get(row)
    if (known !== undefined) {
      // Most recently used last, so the first entry is the one to forget.
      this.recent.delete(row)
      this.recent.set(row, known)
      return known
    }
    const bytes = new Uint8Array(4 * dimensions)
    const read = readSync(this.fd, bytes, 0, bytes.length, this.vectorsAt + row * bytes.length)
    if (read !== bytes.length) throw new Error(`GloveRows: read ${read} of ${bytes.length} bytes of row ${row}`)
    const vector = floatsAt(bytes, 0, dimensions)
    if (this.recent.size >= this.recentLimit) this.recent.delete(this.recent.keys().next().value!)
    if (this.recentLimit > 0) this.recent.set(row, vector)
    return vector
  }
}
