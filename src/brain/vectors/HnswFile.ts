/**
 * The file `hnswlib` writes for an index (`HnswIndex.writeTo`), read only as far as forgetting needs: a deleted point
 * (a memory removed, or an older vector of a rewritten one) keeps its vector in the index until the index is built
 * again, and the file would keep it on disk. `sealIndexFile` overwrites those vectors with zeros in the file, so
 * a kept index holds no vector of a forgotten memory. A zero vector is at distance 1 from every query under cosine:
 * searches may still pass through the point, and it is never returned (it is marked deleted).
 *
 * The layout is hnswlib's `saveIndex` (`hnswalg.h`, little-endian, 64-bit `size_t`): a 96-byte header, then one
 * fixed-size block per point — its level-0 links (a 16-bit count, a flags byte whose bit 0 marks it deleted, one
 * spare byte, the links), its vector, its label — then the upper levels' links, which hold no vector.
 */
import { type FileHandle, open } from "node:fs/promises"

const headerBytes = 96
/** Points read and written back per round trip (a few MB). */
const pointsPerRead = 4096
const deleteMark = 0x01

interface Layout {
  readonly offsetLevel0: number
  readonly count: number
  readonly bytesPerPoint: number
  readonly labelOffset: number
  readonly dataOffset: number
}

const layoutOf = (header: Buffer): Layout => {
  const size = (at: number) => Number(header.readBigUInt64LE(at))
  const layout = {
    offsetLevel0: size(0),
    count: size(16),
    bytesPerPoint: size(24),
    labelOffset: size(32),
    dataOffset: size(40)
  }
  const sane = layout.bytesPerPoint > 0 && layout.offsetLevel0 + 4 <= layout.dataOffset &&
    layout.dataOffset < layout.labelOffset && layout.labelOffset + 8 <= layout.bytesPerPoint
  if (!sane) throw new RangeError("not an hnswlib index file (its point layout is inconsistent)")
  return layout
}

/** The layout the open index file's header describes. */
const layoutIn = async (file: FileHandle): Promise<Layout> => {
  const header = Buffer.alloc(headerBytes)
  const { bytesRead } = await file.read(header, 0, headerBytes, 0)
  if (bytesRead !== headerBytes) throw new RangeError("the index file is shorter than its header")
  return layoutOf(header)
}

/** The points and the bytes per vector an index file says it holds, checked before the native reader sees it. */
export const describeIndexFile = async (
  path: string
): Promise<{ readonly points: number; readonly vectorBytes: number }> => {
  const file = await open(path, "r")
  try {
    const layout = await layoutIn(file)
    const { size } = await file.stat()
    if (size < headerBytes + layout.count * layout.bytesPerPoint) {
      throw new RangeError("the index file ends inside its points")
    }
    return { points: layout.count, vectorBytes: layout.labelOffset - layout.dataOffset }
  } finally {
    await file.close()
  }
}

/**
 * Zeroes the vector of every point marked deleted in the index file at `path`, then flushes it to disk (a `.brain`
 * file that names it is written after); how many points were scrubbed.
 */
export const sealIndexFile = async (path: string): Promise<number> => {
  const file = await open(path, "r+")
  try {
    const layout = await layoutIn(file)
    const chunk = Buffer.alloc(pointsPerRead * layout.bytesPerPoint)
    let scrubbed = 0
    for (let first = 0; first < layout.count; first += pointsPerRead) {
      const points = Math.min(pointsPerRead, layout.count - first)
      const bytes = points * layout.bytesPerPoint
      const position = headerBytes + first * layout.bytesPerPoint
      const { bytesRead } = await file.read(chunk, 0, bytes, position)
      if (bytesRead !== bytes) throw new RangeError("the index file ends inside its points")
      let changed = false
      for (let point = 0; point < points; point++) {
        const start = point * layout.bytesPerPoint
        if ((chunk[start + layout.offsetLevel0 + 2]! & deleteMark) === 0) continue
        chunk.fill(0, start + layout.dataOffset, start + layout.labelOffset)
        changed = true
        scrubbed++
      }
      if (changed) await file.write(chunk, 0, bytes, position)
    }
    await file.chmod(0o600)
    await file.sync()
    return scrubbed
  } finally {
    await file.close()
  }
}
