/**
 * Reads a zip archive with `yauzl`, one entry at a time, and refuses a hostile one before anything is kept:
 * path traversal (`..`), absolute paths, symbolic links, encrypted entries, more than `maxFiles` files, a file
 * above `maxFileBytes`, an entry that inflates more than `maxRatio` times its compressed size, or an archive that
 * inflates past its budget (`inflationBudget`: `maxInflation` times its own size, at least `inflationFloorBytes`,
 * at most `maxTotalBytes`). Sizes are counted on the bytes actually inflated, so an archive whose headers lie
 * about sizes is stopped as soon as it crosses a cap, not after it filled memory. Codebase imports keep the
 * entries (`readZip`); uploaded Office documents are only checked (`checkZip`) before a parser opens them.
 */
import { Data, Effect } from "effect"
import type { Entry, ZipFile, ZipFileOptions } from "yauzl"
import { inflateBounded, type InflateOutcome } from "./EntryInflater.ts"

export interface ArchiveLimits {
  readonly maxFiles: number
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
  /** Most one entry may inflate, as a multiple of its compressed size (small entries excepted: `ratioFloor`). */
  readonly maxRatio: number
  /** Most the whole archive may inflate, as a multiple of the archive's own size... */
  readonly maxInflation: number
  /** ...but never less than this, so that a small archive of well-compressing text is not refused for it. */
  readonly inflationFloorBytes: number
}

export interface ArchiveEntry {
  readonly path: string
  readonly bytes: Uint8Array
}

export interface ZipSummary {
  readonly files: number
  readonly inflatedBytes: number
}

export type RefusalReason =
  | "not_a_zip"
  | "path_traversal"
  | "absolute_path"
  | "symlink"
  | "encrypted"
  | "too_many_files"
  | "file_too_large"
  | "archive_too_large"
  | "archive_ratio"
  | "compression_ratio"
  | "size_mismatch"
  | "globs_too_costly"

export class ArchiveRefused extends Data.TaggedError("ArchiveRefused")<{
  readonly reason: RefusalReason
  readonly message: string
}> {}

/** Bytes the archive may inflate to in all. */
export const inflationBudget = (limits: ArchiveLimits, archiveBytes: number): number =>
  Math.min(limits.maxTotalBytes, Math.max(limits.inflationFloorBytes, limits.maxInflation * archiveBytes))

/**
 * Entries that inflate to no more than this never trip the ratio cap: small text files legitimately compress very
 * well (a license header, a file of blank lines). 64 KiB, or a quarter of the file cap when that is smaller, so the
 * ratio still guards when the file cap is small. Apache POI's zip-bomb guard defaults to the same 100×, with 100 KB.
 */
export const ratioFloor = (limits: ArchiveLimits) => Math.min(64 * 1024, limits.maxFileBytes / 4)
/** Synchronous inflating between two turns of the event loop (`EntryInflater`'s small entries), in bytes and entries. */
const yieldEveryBytes = 1024 * 1024
const yieldEveryEntries = 128
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
    if (part === "..") {
      return new ArchiveRefused({ reason: "path_traversal", message: `entry '${raw}' leaves the archive root` })
    }
    parts.push(part)
  }
  return parts.join("/")
}

type Cap = readonly [limit: number, reason: RefusalReason, message: string]

/**
 * The caps one entry's inflated size must stay within: the file cap, what is left of the archive's budget, the
 * compression ratio, and the size its header declares (more or fewer bytes than declared is a lying header).
 */
const entryCaps = (name: string, entry: Entry, limits: ArchiveLimits, budgetLeft: Cap): ReadonlyArray<Cap> => [
  [limits.maxFileBytes, "file_too_large", `entry '${name}' inflates past ${limits.maxFileBytes} bytes`],
  budgetLeft,
  [
    Math.max(ratioFloor(limits), limits.maxRatio * Math.max(1, entry.compressedSize)),
    "compression_ratio",
    `entry '${name}' inflates more than ${limits.maxRatio} times its compressed size of ${entry.compressedSize} bytes`
  ],
  [
    entry.uncompressedSize,
    "size_mismatch",
    `entry '${name}' inflates past the ${entry.uncompressedSize} bytes its header declares`
  ]
]

const tightest = (caps: ReadonlyArray<Cap>) => caps.reduce((tight, cap) => (cap[0] < tight[0] ? cap : tight))

/** yauzl loads with the first archive: most servers never import a codebase. */
const loadYauzl = Effect.promise(() => import("yauzl").then((module) => module.default))

const walk = (bytes: Uint8Array, limits: ArchiveLimits, keep: boolean) =>
  Effect.flatMap(
    loadYauzl,
    (yauzl) =>
      Effect.callback<{ entries: Array<ArchiveEntry>; files: number; total: number }, ArchiveRefused>((resume) => {
        const budget = inflationBudget(limits, bytes.byteLength)
        const overBudget: RefusalReason = budget < limits.maxTotalBytes ? "archive_ratio" : "archive_too_large"
        const overBudgetMessage = overBudget === "archive_ratio"
          ? `the archive inflates past ${budget} bytes: at most ${limits.maxInflation} times its own ${bytes.byteLength} bytes ` +
            `(and ${limits.inflationFloorBytes} bytes for any archive) are accepted`
          : `the archive inflates to more than ${limits.maxTotalBytes} bytes`
        const entries: Array<ArchiveEntry> = []
        let files = 0
        let total = 0
        let settled = false
        let zip: ZipFile | undefined
        let abandonInflate = () => {}
        let syncBytes = 0
        let syncEntries = 0
        const refuse = (reason: RefusalReason, message: string) => {
          if (settled) return
          settled = true
          zip?.close()
          resume(Effect.fail(new ArchiveRefused({ reason, message })))
        }
        /** The next entry; after enough synchronous work, on a later turn of the event loop so requests get answered. */
        const next = (opened: ZipFile, synchronous: number | undefined) => {
          if (synchronous === undefined) syncBytes = syncEntries = 0
          else {
            syncBytes += synchronous
            syncEntries++
          }
          if (syncBytes < yieldEveryBytes && syncEntries < yieldEveryEntries) return opened.readEntry()
          syncBytes = syncEntries = 0
          setImmediate(() => settled || opened.readEntry())
        }
        const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        yauzl.fromBuffer(
          buffer,
          { lazyEntries: true, decodeStrings: false, validateEntrySizes: true },
          (openError, opened) => {
            if (openError || opened === undefined) {
              return refuse("not_a_zip", `not a readable zip archive: ${openError?.message ?? "unknown"}`)
            }
            zip = opened
            if (opened.entryCount > limits.maxFiles * 2 + 1000) {
              return refuse(
                "too_many_files",
                `the archive lists ${opened.entryCount} entries; at most ${limits.maxFiles} files are accepted`
              )
            }
            opened.on("error", (error: Error) => refuse("not_a_zip", `the archive is damaged: ${error.message}`))
            opened.on("end", () => {
              if (settled) return
              settled = true
              resume(Effect.succeed({ entries, files, total }))
            })
            opened.on("entry", (entry: Entry) => {
              if (settled) return
              const raw = (entry as unknown as { fileNameRaw: Buffer }).fileNameRaw.toString(
                (entry.generalPurposeBitFlag & 0x800) !== 0 ? "utf8" : "latin1"
              )
              const path = normalizeEntryPath(raw)
              if (typeof path !== "string") return refuse(path.reason, path.message)
              if (raw.endsWith("/") || path === "") return next(opened, 0)
              if (((entry.externalFileAttributes >>> 16) & fileTypeMask) === symlinkMode) {
                return refuse("symlink", `entry '${raw}' is a symbolic link`)
              }
              if (entry.isEncrypted()) return refuse("encrypted", `entry '${raw}' is encrypted`)
              if (files + 1 > limits.maxFiles) {
                return refuse("too_many_files", `the archive holds more than ${limits.maxFiles} files`)
              }
              if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
                return refuse("not_a_zip", `entry '${raw}' uses compression method ${entry.compressionMethod}`)
              }
              // What the header declares is checked before a byte is inflated: most bombs are honest about their sizes.
              const caps = entryCaps(raw, entry, limits, [budget - total, overBudget, overBudgetMessage])
              const declaredOver = caps.slice(0, 3).find(([limit]) => entry.uncompressedSize > limit)
              if (declaredOver !== undefined) {
                return refuse(
                  declaredOver[1],
                  declaredOver[1] === "file_too_large"
                    ? `entry '${raw}' is ${entry.uncompressedSize} bytes; at most ${limits.maxFileBytes} are accepted per file`
                    : declaredOver[2]
                )
              }
              const [limit, reason, message] = tightest(caps)
              opened.openReadStream(entry, storedBytes, (streamError, stream) => {
                if (streamError || stream === undefined) {
                  return refuse("not_a_zip", `entry '${raw}' cannot be read: ${streamError?.message ?? "unknown"}`)
                }
                const chunks: Array<Buffer> = []
                stream.on("data", (chunk: Buffer) => chunks.push(chunk))
                stream.on("error", (error: Error) => refuse("not_a_zip", `entry '${raw}' is damaged: ${error.message}`))
                stream.on("end", () => {
                  if (settled) return
                  const stored = Buffer.concat(chunks)
                  const accept = (outcome: InflateOutcome) => {
                    if (settled) return
                    if (outcome._tag === "PastLimit") return refuse(reason, message)
                    if (outcome._tag === "Damaged") {
                      return refuse("not_a_zip", `entry '${raw}' is damaged: ${outcome.message}`)
                    }
                    if (outcome.size !== entry.uncompressedSize) {
                      return refuse(
                        "size_mismatch",
                        `entry '${raw}' holds ${outcome.size} bytes, not the ${entry.uncompressedSize} its header declares`
                      )
                    }
                    files++
                    total += outcome.size
                    if (outcome.bytes !== undefined) {
                      entries.push({
                        path,
                        bytes: new Uint8Array(outcome.bytes.buffer, outcome.bytes.byteOffset, outcome.bytes.byteLength)
                      })
                    }
                    next(opened, outcome.synchronous ? outcome.size : undefined)
                  }
                  if (entry.compressionMethod === 0) {
                    return accept(
                      stored.byteLength > limit
                        ? { _tag: "PastLimit" }
                        : {
                          _tag: "Inflated",
                          bytes: keep ? stored : undefined,
                          size: stored.byteLength,
                          synchronous: true
                        }
                    )
                  }
                  abandonInflate = inflateBounded(stored, entry.uncompressedSize, limit, keep, accept)
                })
              })
            })
            opened.readEntry()
          }
        )
        return Effect.sync(() => {
          settled = true
          abandonInflate()
          zip?.close()
        })
      })
  )

/** Every file of the archive with its content, in archive order; folders are skipped. */
export const readZip = (bytes: Uint8Array, limits: ArchiveLimits): Effect.Effect<Array<ArchiveEntry>, ArchiveRefused> =>
  Effect.map(walk(bytes, limits, true), (read) => read.entries)

/** The same checks as `readZip`, counting what the entries inflate to without keeping it. */
export const checkZip = (bytes: Uint8Array, limits: ArchiveLimits): Effect.Effect<ZipSummary, ArchiveRefused> =>
  Effect.map(walk(bytes, limits, false), (read) => ({ files: read.files, inflatedBytes: read.total }))
