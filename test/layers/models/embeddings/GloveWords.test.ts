/** Word-level GloVe lookups for query expansion: vectors and nearest neighbours among frequent words. */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { GloveTable } from "../../../../layers/models/embeddings/GloveTable.ts"
import { GloveWords } from "../../../../layers/models/embeddings/GloveWords.ts"
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
