/**
 * Word neighbours for query expansion: from the GloVe table when the embeddings provider is `glove` (the table
 * is already loaded, once, for the embedder); other providers get no expansion rather than a 134 MiB table.
 */
import { Config, Effect, Layer } from "effect"
import { WordVectors } from "../../src/models/WordVectors.ts"
import { GloveWordsLive } from "./embeddings/EmbeddingsLive.ts"
import { GloveWords } from "./embeddings/GloveWords.ts"

const fromGlove = Layer.effect(
  WordVectors,
  Effect.gen(function*() {
    const words = yield* GloveWords
    return WordVectors.of({ nearest: (word, k) => words.nearest(word, k) })
  })
).pipe(Layer.provide(GloveWordsLive))

export const WordVectorsLive = Layer.unwrap(Effect.gen(function*() {
  const provider = yield* Config.String("SERVICE_API_EMBEDDINGS_PROVIDER").pipe(Config.withDefault("glove"))
  return provider === "glove" ? fromGlove : WordVectors.none
}))
