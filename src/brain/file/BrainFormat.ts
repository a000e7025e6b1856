/**
 * The `.brain` container: a fixed 32-byte header (magic, format version, payload length, CRC-32 of the payload,
 * CRC-32 of the header) and a versioned payload. Version 2 payloads open with the SHA-256 of everything after it;
 * version 1 (no SHA-256, graph only) stays readable. `open` checks a file in a fixed order and names the first
 * thing wrong with it; it never trusts a length or offset it has not checked. Pure: no I/O.
 */
import { createHash } from "node:crypto"
import { crc32 } from "node:zlib"
import { runWhole, type Sliced } from "../Sliced.ts"
import { type SectionEntry, SectionReader, SectionWriter } from "./Sections.ts"

export const magic = Uint8Array.from([0x89, 0x45, 0x42, 0x52, 0x4e, 0x0d, 0x0a, 0x1a])
export const headerBytes = 32
export const currentVersion = 2
export const readableVersions: ReadonlyArray<number> = [1, 2]

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })
const align = (value: number) => (value + 7) & ~7

/** Why a file was refused; `reason` is what `import/validate` answers. */
export class BrainFileInvalid extends Error {
  readonly reason: string
  readonly version: number | null

  constructor(reason: string, version: number | null) {
    super(reason)
    this.reason = reason
    this.version = version
  }
}

export interface OpenedBrainFile {
  readonly version: number
  readonly manifest: Record<string, unknown>
  readonly sections: SectionReader
  /** SHA-256 of the payload (hex): the file's identity. */
  readonly sha256: string
}

/** Checksums are taken 4 MiB at a time, with a pause between: a 100k-memory file is 160 MB. */
const checksumChunk = 4 * 1024 * 1024

function* sha256(bytes: Uint8Array): Sliced<Buffer> {
  const hash = createHash("sha256")
  for (let at = 0; at < bytes.length; at += checksumChunk) {
    hash.update(bytes.subarray(at, at + checksumChunk))
    yield
  }
  return hash.digest()
}

function* crc32Of(bytes: Uint8Array): Sliced<number> {
  let value = 0
  for (let at = 0; at < bytes.length; at += checksumChunk) {
    value = crc32(bytes.subarray(at, at + checksumChunk), value)
    yield
  }
  return value
}

/**
 * Header + payload for a manifest and its sections, in the current version. Assembled in the one buffer that is
 * returned (a 100k-memory brain is 65 MB: building the area, the payload and the file apart held three copies).
 */
export const encode = (manifest: Record<string, unknown>, sections: SectionWriter): Uint8Array =>
  runWhole(encoding(manifest, sections))

/** `encode` in slices (`Sliced.ts`). */
export function* encoding(manifest: Record<string, unknown>, sections: SectionWriter): Sliced<Uint8Array> {
  const { entries, size } = sections.layout()
  const manifestBytes = encoder.encode(JSON.stringify({ ...manifest, sections: entries }))
  const bodyStart = 32
  const areaStart = align(bodyStart + 4 + manifestBytes.length)
  const file = new Uint8Array(headerBytes + areaStart + size)
  const payload = file.subarray(headerBytes)
  new DataView(payload.buffer, payload.byteOffset).setUint32(bodyStart, manifestBytes.length, true)
  payload.set(manifestBytes, bodyStart + 4)
  yield* sections.copyingInto(payload, areaStart)
  payload.set(yield* sha256(payload.subarray(bodyStart)), 0)
  yield* writeHeader(file, currentVersion)
  return file
}

/** Fills the 32-byte header of `file`, whose payload follows it. */
function* writeHeader(file: Uint8Array, version: number): Sliced<void> {
  const view = new DataView(file.buffer, file.byteOffset, headerBytes)
  const payload = file.subarray(headerBytes)
  file.set(magic, 0)
  view.setUint16(8, version, true)
  view.setUint16(10, 0, true)
  view.setBigUint64(12, BigInt(payload.length), true)
  view.setUint32(20, yield* crc32Of(payload), true)
  view.setUint32(24, crc32(file.subarray(0, 24)), true)
}

/** The 32-byte header for a payload, followed by the payload. */
export const withHeader = (version: number, payload: Uint8Array): Uint8Array => {
  const file = new Uint8Array(headerBytes + payload.length)
  file.set(payload, headerBytes)
  runWhole(writeHeader(file, version))
  return file
}

/** Checks a whole file and opens its manifest and sections; throws `BrainFileInvalid` naming what is wrong. */
export const open = (file: Uint8Array, maxBytes: number): OpenedBrainFile => runWhole(opening(file, maxBytes))

/** `open` in slices (`Sliced.ts`). */
export function* opening(file: Uint8Array, maxBytes: number): Sliced<OpenedBrainFile> {
  if (file.length > maxBytes) {
    throw new BrainFileInvalid(`file too large (${file.length} bytes > ${maxBytes} bytes max)`, null)
  }
  if (file.length < headerBytes) {
    throw new BrainFileInvalid(
      `invalid brain file header: too short (${file.length} bytes, the header alone is ${headerBytes})`,
      null
    )
  }
  for (let i = 0; i < magic.length; i++) {
    if (file[i] !== magic[i]) {
      throw new BrainFileInvalid("invalid brain file header: bad magic (not a .brain file)", null)
    }
  }
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength)
  const version = view.getUint16(8, true)
  if (!readableVersions.includes(version)) {
    throw new BrainFileInvalid(
      `unsupported version ${version} (this service reads versions ${readableVersions.join(", ")})`,
      version
    )
  }
  if (view.getUint32(24, true) !== crc32(file.subarray(0, 24))) {
    throw new BrainFileInvalid("invalid brain file header: checksum mismatch", version)
  }
  const declared = view.getBigUint64(12, true)
  const present = BigInt(file.length - headerBytes)
  if (present < declared) {
    throw new BrainFileInvalid(
      `invalid brain file payload: truncated (the header announces ${declared} bytes, ${present} are present)`,
      version
    )
  }
  if (present > declared) {
    throw new BrainFileInvalid(`invalid brain file payload: ${present - declared} bytes after the payload`, version)
  }
  const payload = file.subarray(headerBytes)
  if (view.getUint32(20, true) !== (yield* crc32Of(payload))) {
    throw new BrainFileInvalid("invalid brain file payload: checksum mismatch (crc32)", version)
  }
  let bodyStart = 0
  let digest = ""
  if (version >= 2) {
    if (payload.length < 36) {
      throw new BrainFileInvalid("invalid brain file payload: truncated (no room for its sha256)", version)
    }
    const computed = yield* sha256(payload.subarray(32))
    if (!computed.equals(payload.subarray(0, 32))) {
      throw new BrainFileInvalid("invalid brain file payload: checksum mismatch (sha256)", version)
    }
    bodyStart = 32
    digest = computed.toString("hex")
  } else {
    if (payload.length < 4) throw new BrainFileInvalid("invalid brain file payload: truncated (no manifest)", version)
    digest = (yield* sha256(payload)).toString("hex")
  }
  const payloadView = new DataView(payload.buffer, payload.byteOffset, payload.byteLength)
  const manifestLength = payloadView.getUint32(bodyStart, true)
  const areaStart = align(bodyStart + 4 + manifestLength)
  if (bodyStart + 4 + manifestLength > payload.length || areaStart > payload.length) {
    throw new BrainFileInvalid("invalid brain file payload: the manifest runs past the payload", version)
  }
  let manifest: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(decoder.decode(payload.subarray(bodyStart + 4, bodyStart + 4 + manifestLength)))
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object")
    manifest = parsed as Record<string, unknown>
  } catch {
    throw new BrainFileInvalid("invalid brain file payload: the manifest is not a JSON object", version)
  }
  const entries = manifest["sections"]
  if (!Array.isArray(entries) || !entries.every(isSectionEntry)) {
    throw new BrainFileInvalid("invalid brain file payload: the section table is malformed", version)
  }
  try {
    return { version, manifest, sections: new SectionReader(entries, payload.subarray(areaStart)), sha256: digest }
  } catch (error) {
    throw new BrainFileInvalid(`invalid brain file payload: ${(error as Error).message}`, version)
  }
}

const kinds = new Set(["i32", "f32", "f64", "u8", "strings", "json", "bytes"])

const isSectionEntry = (value: unknown): value is SectionEntry => {
  if (typeof value !== "object" || value === null) return false
  const entry = value as Record<string, unknown>
  return typeof entry["name"] === "string" && typeof entry["kind"] === "string" && kinds.has(entry["kind"]) &&
    Number.isSafeInteger(entry["offset"]) && Number.isSafeInteger(entry["length"]) &&
    Number.isSafeInteger(entry["count"]) &&
    (entry["count"] as number) >= 0
}

/** A version-1 payload (manifest and sections, no SHA-256): only for writing test fixtures of the old format. */
export const encodeVersion1 = (manifest: Record<string, unknown>, sections: SectionWriter): Uint8Array => {
  const { entries, area } = sections.finish()
  const manifestBytes = encoder.encode(JSON.stringify({ ...manifest, sections: entries }))
  const areaStart = align(4 + manifestBytes.length)
  const payload = new Uint8Array(areaStart + area.length)
  new DataView(payload.buffer).setUint32(0, manifestBytes.length, true)
  payload.set(manifestBytes, 4)
  payload.set(area, areaStart)
  return withHeader(1, payload)
}
