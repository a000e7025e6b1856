/**
 * The GloVe table cache: converted once, reused afterwards (never reconverted while valid), rebuilt when it is
 * damaged or from another package version, and never left half-written when a conversion fails.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import * as Path from "node:path"
import { CACHE_FILE, load } from "../../../../layers/models/embeddings/GloveTable.ts"
import { sharedGloveCacheDir } from "./GloveCacheDir.ts"
import { winkDocument } from "./WinkFixture.ts"

const rows: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
  ["the", [0.1, 0.2, 0.3, 0.4]],
  ["dog", [1, 0, 0.5, -0.5]],
  ["cat", [0.9, 0.1, 0.4, -0.6]],
  ["stock", [-1, 0.8, 0, 0.2]]
]

/** A temporary directory holding a small source JSON; the cache goes to `<dir>/models`. */
const fixture = (text = winkDocument(rows)) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "engram-glove-" })
    const source = Path.join(dir, "vectors.json")
    yield* fs.writeFileString(source, text)
    const cacheDir = Path.join(dir, "models")
    return { fs, source, cacheDir, cachePath: Path.join(cacheDir, CACHE_FILE) }
  })

const mtimeOf = (fs: FileSystem.FileSystem, path: string) =>
  fs.stat(path).pipe(Effect.map((info) => (info.mtime._tag === "Some" ? info.mtime.value.getTime() : -1)))

describe("GloveTable", () => {
  it.live("converts the JSON once, then loads the cache without converting again", () =>
    Effect.gen(function*() {
      const { cacheDir, cachePath, fs, source } = yield* fixture()
      const first = yield* load({ cacheDir, source })
      assert.strictEqual(first.origin, "converted")
      const written = yield* mtimeOf(fs, cachePath)
      assert.deepStrictEqual(yield* fs.readDirectory(cacheDir), [CACHE_FILE])

      const second = yield* load({ cacheDir, source })
      assert.strictEqual(second.origin, "cache")
      assert.strictEqual(yield* mtimeOf(fs, cachePath), written)
      assert.deepStrictEqual(second.vocabulary.words(), ["the", "dog", "cat", "stock"])
      assert.strictEqual(second.dimensions, 4)
      for (let row = 0; row < rows.length; row++) {
        assert.deepStrictEqual(Array.from(second.vectors.row(row)), Array.from(first.vectors.row(row)))
        assert.deepStrictEqual(Array.from(second.vectors.row(row)), rows[row]![1].map(Math.fround))
      }
      assert.deepStrictEqual(Array.from(second.common), Array.from(first.common))
      assert.deepStrictEqual(Array.from(second.unused), Array.from(first.unused))
      assert.strictEqual(second.vocabulary.get("cat"), 2)
      assert.strictEqual(second.vocabulary.get("cats"), undefined)
      // Zipf estimate from rank: more frequent words are more probable.
      assert.isTrue(second.probabilities[0]! > second.probabilities[3]!)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("holds the most frequent rows in memory and reads the others from the file, the same values", () =>
    Effect.gen(function*() {
      const { cacheDir, source } = yield* fixture()
      const whole = yield* load({ cacheDir, source })
      const partial = yield* load({ cacheDir, source, residentRows: 1, recentRows: 1 })
      assert.strictEqual(whole.vectors.residentRows, rows.length)
      assert.strictEqual(partial.vectors.residentRows, 1)
      // Row 2 is read, remembered, forgotten for row 3, and read again.
      for (const row of [0, 2, 2, 3, 2, 1]) {
        assert.deepStrictEqual(Array.from(partial.vectors.row(row)), Array.from(whole.vectors.row(row)))
      }
      assert.throws(() => partial.vectors.row(rows.length))
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("rebuilds a truncated cache", () =>
    Effect.gen(function*() {
      const { cacheDir, cachePath, fs, source } = yield* fixture()
      yield* load({ cacheDir, source })
      const bytes = yield* fs.readFile(cachePath)
      yield* fs.writeFile(cachePath, bytes.subarray(0, bytes.length - 8))
      const reloaded = yield* load({ cacheDir, source })
      assert.strictEqual(reloaded.origin, "converted")
      assert.strictEqual((yield* load({ cacheDir, source })).origin, "cache")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("rebuilds the cache when the package's JSON changed", () =>
    Effect.gen(function*() {
      const { cacheDir, fs, source } = yield* fixture()
      yield* load({ cacheDir, source })
      yield* fs.writeFileString(source, winkDocument([...rows, ["market", [0, 0, 1, 1]]]))
      const reloaded = yield* load({ cacheDir, source })
      assert.strictEqual(reloaded.origin, "converted")
      assert.strictEqual(reloaded.vocabulary.size, 5)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("a failed conversion leaves neither a cache nor a temporary file", () =>
    Effect.gen(function*() {
      const text = winkDocument(rows)
      const { cacheDir, fs, source } = yield* fixture(text.slice(0, text.length - 30))
      const error = yield* Effect.flip(load({ cacheDir, source }))
      assert.strictEqual(error._tag, "EmbeddingError")
      assert.match(error.message, /cannot convert/)
      assert.deepStrictEqual(yield* fs.readDirectory(cacheDir), [])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("removes what a killed conversion and older formats left behind", () =>
    Effect.gen(function*() {
      const { cacheDir, fs, source } = yield* fixture()
      yield* fs.makeDirectory(cacheDir, { recursive: true })
      yield* fs.writeFileString(Path.join(cacheDir, "glove-wink-sg-100d.v1.bin"), "an older format")
      const leftover = Path.join(cacheDir, `${CACHE_FILE}.4242-7.tmp`)
      yield* fs.writeFileString(leftover, "partial")
      const longAgo = new Date(Date.UTC(2020, 0, 1))
      yield* fs.utimes(leftover, longAgo, longAgo)
      yield* load({ cacheDir, source })
      assert.deepStrictEqual(yield* fs.readDirectory(cacheDir), [CACHE_FILE])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("concurrent first loads convert once; the others wait and read the cache", () =>
    Effect.gen(function*() {
      const { cacheDir, fs, source } = yield* fixture()
      const tables = yield* Effect.all([1, 2, 3].map(() => load({ cacheDir, source })), { concurrency: "unbounded" })
      assert.deepStrictEqual(tables.map((table) => table.origin).sort(), ["cache", "cache", "converted"])
      assert.deepStrictEqual(yield* fs.readDirectory(cacheDir), [CACHE_FILE])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live(
    "the package's table: 341k frequency-ordered words × 100 dimensions, cached per machine",
    () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* load({ cacheDir: sharedGloveCacheDir })
        const written = yield* mtimeOf(fs, Path.join(sharedGloveCacheDir, CACHE_FILE))
        const table = yield* load({ cacheDir: sharedGloveCacheDir })
        assert.strictEqual(table.origin, "cache")
        assert.strictEqual(yield* mtimeOf(fs, Path.join(sharedGloveCacheDir, CACHE_FILE)), written)
        assert.strictEqual(table.vocabulary.size, 341_479)
        assert.strictEqual(table.dimensions, 100)
        assert.strictEqual(table.vocabulary.word(0), "the")
        const words = table.vocabulary.words()
        const map = new Map(words.map((word, row) => [word, row]))
        for (const word of words) assert.strictEqual(table.vocabulary.get(word), map.get(word))
        assert.strictEqual(table.vectors.size, 341_479)
        assert.strictEqual(table.vectors.row(341_478).length, 100)
        assert.closeTo(Math.hypot(...table.common), 1, 1e-5)
        assert.closeTo(Math.hypot(...table.unused), 1, 1e-5)
        assert.closeTo(table.common.reduce((sum, value, i) => sum + value * table.unused[i]!, 0), 0, 1e-6)
      }).pipe(Effect.provide(NodeFileSystem.layer)),
    120_000
  )
})
