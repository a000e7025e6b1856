/**
 * Deterministic stand-in embeddings for tests that exercise retain and recall logic rather than a model:
 * hashed character trigrams (similar texts get similar vectors), 64 dimensions, no files, no network.
 */
import { Effect, Layer } from "effect"
import { Embeddings } from "../../src/models/Embeddings.ts"
import { Llm } from "../../src/models/Llm.ts"
import { fakeEmbedding } from "./ScriptedOpenAi.ts"

export const trigramEmbeddings = (dimensions = 64) =>
  Layer.succeed(Embeddings)(Embeddings.of({
    identity: { provider: "test", model: `trigram-${dimensions}`, dimensions },
    embedDocuments: (texts) => Effect.succeed(texts.map((text) => Float32Array.from(fakeEmbedding(text, dimensions)))),
    embedQuery: (text) => Effect.succeed(Float32Array.from(fakeEmbedding(text, dimensions)))
  }))

/** Trigram embeddings and no language model: the offline pipeline, fast. */
export const OfflineTestModels = Layer.mergeAll(trigramEmbeddings(), Llm.layerNone)
