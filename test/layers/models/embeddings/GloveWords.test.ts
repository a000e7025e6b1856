/** Word-level GloVe lookups for query expansion: vectors and nearest neighbours among frequent words. */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { GloveTable, type GloveTableShape } from "../../../../layers/models/embeddings/GloveTable.ts"
import { GloveWords, type Neighbour } from "../../../../layers/models/embeddings/GloveWords.ts"
import { sharedGloveCacheDir } from "./GloveCacheDir.ts"

const WordsLive = GloveWords.layer().pipe(
  Layer.provide(GloveTable.layer({ cacheDir: sharedGloveCacheDir })),
  Layer.provide(NodeFileSystem.layer)
)

// Real clock: the first load may wait on another test file converting the shared cache.
layer(WordsLive, { timeout: 120_000, excludeTestServices: true })("GloveWords", (it) => {
  it.effect("finds plausible neighbours, most similar first, never the word itself", () =>
    Effect.gen(function*() {
      const words = yield* GloveWords
      const paris = words.nearest("paris", 10)
      assert.strictEqual(paris.length, 10)
      const names = paris.map((neighbour) => neighbour.word)
      assert.notInclude(names, "paris")
      assert.includeMembers(names, ["france", "london"])
      for (let i = 1; i < paris.length; i++) assert.isTrue(paris[i - 1]!.similarity >= paris[i]!.similarity)
      assert.include(words.nearest("Dog", 5).map((neighbour) => neighbour.word), "cat")
    }))

  it.effect("looks words up case- and accent-insensitively and knows what it does not know", () =>
    Effect.gen(function*() {
      const words = yield* GloveWords
      const cafe = words.vector("Café")
      assert.isTrue(Option.isSome(cafe))
      assert.strictEqual(Option.getOrThrow(cafe).length, 100)
      assert.isTrue(Option.isNone(words.vector("xyzzyq")))
      assert.deepStrictEqual(words.nearest("xyzzyq", 5), [])
      assert.deepStrictEqual(words.nearest("paris", 0), [])
    }))

  it.effect("searches around any vector, such as a word's own", () =>
    Effect.gen(function*() {
      const words = yield* GloveWords
      const [first] = words.nearestTo(Option.getOrThrow(words.vector("berlin")), 1)
      assert.strictEqual(first?.word, "berlin")
      assert.closeTo(first!.similarity, 1, 1e-5)
    }))
})

const unit = (vector: Float32Array) => {
  let norm = 0
  for (const value of vector) norm += value * value
  norm = Math.sqrt(norm) || 1
  return vector.map((value) => value / norm)
}

/**
 * A copy of the pool's unit vectors (the first `poolSize` words with a letter), made once per table: read row by row
 * for every probe, over a table of 1,000 resident rows, it was 16 s of the file.
 */
const unitPools = new WeakMap<
  GloveTableShape,
  { readonly rows: Array<number>; readonly vectors: Array<Float32Array> }
>()
const unitPool = (table: GloveTableShape, poolSize = 32_768) => {
  const known = unitPools.get(table)
  if (known !== undefined) return known
  const pool = { rows: [] as Array<number>, vectors: [] as Array<Float32Array> }
  for (let row = 0; row < table.vocabulary.size && pool.rows.length < poolSize; row++) {
    if (!/\p{L}/u.test(table.vocabulary.word(row))) continue
    pool.rows.push(row)
    pool.vectors.push(unit(table.vectors.row(row)))
  }
  unitPools.set(table, pool)
  return pool
}

/**
 * The neighbours as a copy of the pool's unit vectors ranks them, the first found first among equals: what `nearest`
 * answered before it read the resident rows in place.
 */
const unitCopyNeighbours = (table: GloveTableShape, query: Float32Array, k: number, exclude: number) => {
  const target = unit(query)
  const pool = unitPool(table)
  const scored: Array<{ row: number; similarity: number }> = []
  pool.rows.forEach((row, i) => {
    if (row === exclude) return
    const vector = pool.vectors[i]!
    let similarity = 0
    for (let d = 0; d < vector.length; d++) similarity += vector[d]! * target[d]!
    scored.push({ row, similarity })
  })
  return scored
    .sort((a, b) => b.similarity - a.similarity || a.row - b.row)
    .slice(0, k)
    .map(({ row, similarity }): Neighbour => ({ word: table.vocabulary.word(row), similarity }))
}

const probes = [
  "paris",
  "dog",
  "music",
  "salary",
  "quantum",
  "moved",
  "birthday",
  "engineer",
  "the",
  "zebra",
  "tuesday"
]

for (const residentRows of [undefined, 1_000]) {
  const TableAndWords = GloveWords.layer().pipe(
    Layer.provideMerge(GloveTable.layer({ cacheDir: sharedGloveCacheDir, residentRows })),
    Layer.provide(NodeFileSystem.layer)
  )
  layer(TableAndWords, { timeout: 120_000, excludeTestServices: true })(
    `GloveWords over ${residentRows ?? "the default"} resident rows`,
    (it) => {
      it.effect(
        "answers exactly what the pool's unit vectors rank: words, order and similarities",
        () =>
          Effect.gen(function*() {
            const table = yield* GloveTable
            const words = yield* GloveWords
            for (const word of probes) {
              const row = table.vocabulary.get(word)!
              assert.deepStrictEqual(
                words.nearest(word, 10),
                unitCopyNeighbours(table, table.vectors.row(row), 10, row),
                word
              )
            }
            const sum = Option.getOrThrow(words.vector("river")).map((value, d) =>
              value + Option.getOrThrow(words.vector("bank"))[d]!
            )
            assert.deepStrictEqual(words.nearestTo(sum, 25), unitCopyNeighbours(table, sum, 25, -1))
          }),
        120_000
      )
    }
  )
}
