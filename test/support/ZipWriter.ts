/**
 * Writes zip archives for tests, including hostile ones a normal zip tool refuses to make: entries with `..` or
 * absolute names, symbolic links, the encryption flag, and headers that lie about sizes. Deflate via node:zlib.
 */
import { crc32, deflateRawSync } from "node:zlib"

export interface ZipEntry {
  readonly name: string
  readonly data: Uint8Array | string
  /** Unix mode in the external attributes (e.g. 0o120777 for a symlink). */
  readonly mode?: number
  readonly encrypted?: boolean
  /** Declared uncompressed size when it should differ from the real one. */
  readonly declaredSize?: number
  readonly store?: boolean
}

export const makeZip = (entries: ReadonlyArray<ZipEntry>): Uint8Array => {
  const locals: Array<Buffer> = []
  const centrals: Array<Buffer> = []
  // A bomb repeats one buffer hundreds of times: deflate it once (512 × 1 MiB took 1.2 s to build otherwise).
  const packed = new Map<Uint8Array | string, { raw: Buffer; deflated: Buffer; crc: number }>()
  let offset = 0
  for (const entry of entries) {
    let pack = packed.get(entry.data)
    if (pack === undefined) {
      const raw = typeof entry.data === "string" ? Buffer.from(entry.data, "utf8") : Buffer.from(entry.data)
      pack = { raw, deflated: deflateRawSync(raw), crc: crc32(raw) }
      packed.set(entry.data, pack)
    }
    const { raw, crc } = pack
    const body = entry.store === true ? raw : pack.deflated
    const method = entry.store === true ? 0 : 8
    const name = Buffer.from(entry.name, "utf8")
    const flags = 0x800 | (entry.encrypted === true ? 1 : 0)
    const size = entry.declaredSize ?? raw.length
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(flags, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(size, 22)
    local.writeUInt16LE(name.length, 26)
    locals.push(local, name, body)
    const central = Buffer.alloc(46)
    central.writeUInt32LE(0x02014b50, 0)
    central.writeUInt16LE((3 << 8) | 20, 4)
    central.writeUInt16LE(20, 6)
    central.writeUInt16LE(flags, 8)
    central.writeUInt16LE(method, 10)
    central.writeUInt32LE(crc, 16)
    central.writeUInt32LE(body.length, 20)
    central.writeUInt32LE(size, 24)
    central.writeUInt16LE(name.length, 28)
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38)
    central.writeUInt32LE(offset, 42)
    centrals.push(central, name)
    offset += local.length + name.length + body.length
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return new Uint8Array(Buffer.concat([...locals, directory, end]))
}
