/**
 * Reads a zip archive with `yauzl`, one entry at a time, and refuses a hostile one before anything is kept:
 * path traversal (`..`), absolute paths, symbolic links, encrypted entries, more than `maxFiles` files, a file
 * above `maxFileBytes`, more than `maxTotalBytes` uncompressed in all, or an entry that inflates more than
 * `maxRatio` times its compressed size. Sizes are counted on the bytes actually inflated, so an archive whose
 * headers lie about sizes is stopped as soon as it crosses a cap, not after it filled memory.
 */
import { Data, Effect } from "effect"
import type { Entry, ZipFile, ZipFileOptions } from "yauzl"
import { inflateRawSync } from "node:zlib"

export interface ArchiveLimits {
  readonly maxFiles: number
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
  readonly maxRatio: number
}

export interface ArchiveEntry {
  readonly path: string
  readonly bytes: Uint8Array
}

export type RefusalReason =
  | "not_a_zip" | "path_traversal" | "absolute_path" | "symlink" | "encrypted" | "too_many_files"
  | "file_too_large" | "archive_too_large" | "compression_ratio" | "size_mismatch" | "globs_too_costly"

export class ArchiveRefused extends Data.TaggedError("ArchiveRefused")<{
  readonly reason: RefusalReason
  readonly message: string
}> {}

/**
 * Entries smaller than this never trip the ratio cap: small text files legitimately compress very well. A
 * quarter of the per-file cap (at most 1 MiB), so the ratio still guards when the file cap is small.
 */
const ratioFloor = (limits: ArchiveLimits) => Math.min(1024 * 1024, limits.maxFileBytes / 4)
/** Read options for an entry's bytes as stored; `decodeFileData` (yauzl 3.3) is newer than the published typings. */
const storedBytes = { decodeFileData: false } as unknown as ZipFileOptions
const symlinkMode = 0o120000
const fileTypeMask = 0o170000

/** The entry's path with `\` as `/`, or a refusal for an absolute or escaping one. */
export const normalizeEntryPath = (raw: string): string | ArchiveRefused => {
  const slashed = raw.replaceAll("\\", "/")
  if (slashed.startsWith("/") || /^[A-Za-z]:/.test(slashed)) {
    return new ArchiveRefused({ reason: "absolute_path", message: `entry '${raw}' has an absolute path` })
  }
  const parts: Array<string> = []
  for (const part of slashed.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") return new ArchiveRefused({ reason: "path_traversal", message: `entry '${raw}' leaves the archive root` })
    parts.push(part)
  }
  return parts.join("/")
}

/**
 * Inflates one entry's stored bytes, never past the tightest of the caps that apply to it: the file cap, what is
 * left of the archive's, the compression ratio, and the size its header declares (more or fewer bytes than
 * declared is a lying header). One synchronous inflate per entry: a zlib stream per entry cost more than the
 * inflating itself for a repository's many small files (0.4–0.8 s for 2,082 files, now a fraction of that).
 */
const inflateEntry = (
  name: string, entry: Entry, stored: Buffer, limits: ArchiveLimits, totalLeft: number
): Uint8Array | ArchiveRefused => {
  const caps: ReadonlyArray<readonly [number, RefusalReason, string]> = [
    [limits.maxFileBytes, "file_too_large", `entry '${name}' inflates past ${limits.maxFileBytes} bytes`],
    [totalLeft, "archive_too_large", `the archive inflates to more than ${limits.maxTotalBytes} bytes`],
    [Math.max(ratioFloor(limits), limits.maxRatio * Math.max(1, entry.compressedSize)), "compression_ratio",
      `entry '${name}' inflates more than ${limits.maxRatio} times its compressed size`],
    [entry.uncompressedSize, "size_mismatch", `entry '${name}' inflates past the ${entry.uncompressedSize} bytes its header declares`]
  ]
  const [limit, reason, message] = caps.reduce((tightest, cap) => (cap[0] < tightest[0] ? cap : tightest))
  let content: Buffer
  if (entry.compressionMethod === 0) content = stored
  else if (entry.compressionMethod === 8) {
    try {
      content = inflateRawSync(stored, { maxOutputLength: Math.max(1, limit) })
    } catch (error) {
      return error instanceof RangeError
        ? new ArchiveRefused({ reason, message })
        : new ArchiveRefused({ reason: "not_a_zip", message: `entry '${name}' is damaged: ${(error as Error).message}` })
    }
  } else return new ArchiveRefused({ reason: "not_a_zip", message: `entry '${name}' uses compression method ${entry.compressionMethod}` })
  if (content.byteLength > limit) return new ArchiveRefused({ reason, message })
  if (content.byteLength !== entry.uncompressedSize) {
    return new ArchiveRefused({ reason: "size_mismatch", message: `entry '${name}' holds ${content.byteLength} bytes, not the ${entry.uncompressedSize} its header declares` })
  }
  return new Uint8Array(content.buffer, content.byteOffset, content.byteLength)
}

/** yauzl loads with the first archive: most servers never import a codebase. */
const loadYauzl = Effect.promise(() => import("yauzl").then((module) => module.default))

export const readZip = (bytes: Uint8Array, limits: ArchiveLimits): Effect.Effect<Array<ArchiveEntry>, ArchiveRefused> =>
  Effect.flatMap(loadYauzl, (yauzl) =>
    Effect.callback<Array<ArchiveEntry>, ArchiveRefused>((resume) => {
      const entries: Array<ArchiveEntry> = []
      let total = 0
      let settled = false
      let zip: ZipFile | undefined
      const refuse = (reason: RefusalReason, message: string) => {
        if (settled) return
        settled = true
        zip?.close()
        resume(Effect.fail(new ArchiveRefused({ reason, message })))
      }
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      yauzl.fromBuffer(buffer, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (openError, opened) => {
        if (openError || opened === undefined) return refuse("not_a_zip", `not a readable zip archive: ${openError?.message ?? "unknown"}`)
        zip = opened
        if (opened.entryCount > limits.maxFiles * 2 + 1000) {
          return refuse("too_many_files", `the archive lists ${opened.entryCount} entries; at most ${limits.maxFiles} files are accepted`)
        }
        opened.on("error", (error: Error) => refuse("not_a_zip", `the archive is damaged: ${error.message}`))
        opened.on("end", () => {
          if (settled) return
          settled = true
          resume(Effect.succeed(entries))
        })
        opened.on("entry", (entry: Entry) => {
          if (settled) return
          const raw = (entry as unknown as { fileNameRaw: Buffer }).fileNameRaw.toString((entry.generalPurposeBitFlag & 0x800) !== 0 ? "utf8" : "latin1")
          const path = normalizeEntryPath(raw)
          if (typeof path !== "string") return refuse(path.reason, path.message)
          if (raw.endsWith("/") || path === "") return opened.readEntry()
          if (((entry.externalFileAttributes >>> 16) & fileTypeMask) === symlinkMode) {
            return refuse("symlink", `entry '${raw}' is a symbolic link`)
          }
          if (entry.isEncrypted()) return refuse("encrypted", `entry '${raw}' is encrypted`)
          if (entries.length + 1 > limits.maxFiles) return refuse("too_many_files", `the archive holds more than ${limits.maxFiles} files`)
          if (entry.uncompressedSize > limits.maxFileBytes) {
            return refuse("file_too_large", `entry '${raw}' is ${entry.uncompressedSize} bytes; at most ${limits.maxFileBytes} are accepted per file`)
          }
          if (total + entry.uncompressedSize > limits.maxTotalBytes) {
            return refuse("archive_too_large", `the archive inflates to more than ${limits.maxTotalBytes} bytes`)
          }
          // The entry's bytes as stored; inflated below in one synchronous call, bounded by the tightest cap.
          opened.openReadStream(entry, storedBytes, (streamError, stream) => {
            if (streamError || stream === undefined) return refuse("not_a_zip", `entry '${raw}' cannot be read: ${streamError?.message ?? "unknown"}`)
            const chunks: Array<Buffer> = []
            stream.on("data", (chunk: Buffer) => chunks.push(chunk))
            stream.on("error", (error: Error) => refuse("not_a_zip", `entry '${raw}' is damaged: ${error.message}`))
            stream.on("end", () => {
              if (settled) return
              const content = inflateEntry(raw, entry, Buffer.concat(chunks), limits, limits.maxTotalBytes - total)
              if (content instanceof ArchiveRefused) return refuse(content.reason, content.message)
              total += content.byteLength
              entries.push({ path, bytes: content })
              opened.readEntry()
            })
          })
        })
        opened.readEntry()
      })
      return Effect.sync(() => {
        settled = true
        zip?.close()
      })
    }))
