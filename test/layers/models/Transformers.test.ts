/**
 * transformers.js's global settings are set once: an embedder and a reranker loaded in one process from different
 * model folders each keep their own (before, the second load re-pointed the global folder and downloads, and a
 * model loaded after it from the first folder was not found).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { cpSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { onnx as onnxEmbedder } from "../../../layers/models/embeddings/EmbeddingsLive.ts"
import { onnx as onnxReranker } from "../../../layers/models/RerankerLive.ts"
import { Embeddings } from "../../../src/models/Embeddings.ts"
import { Reranker } from "../../../src/models/Reranker.ts"

const sharedModels = Path.resolve("../shared/models")
const embedderModel = "standin-random-minilm-l6"
const rerankerModel = "standin-random-crossencoder-minilm-l6"

describe("transformers.js settings", () => {
  it.live(
    "an embedder and a reranker from two model folders load and answer in either order",
    () =>
      Effect.gen(function*() {
        // The reranker's folder is another directory holding only its model.
        const otherModels = mkdtempSync(Path.join(tmpdir(), "engram-models-"))
        cpSync(Path.join(sharedModels, rerankerModel), Path.join(otherModels, rerankerModel), { recursive: true })
        const embedder = onnxEmbedder({ model: embedderModel, modelsDir: sharedModels })
        const reranker = onnxReranker({ model: rerankerModel, modelsDir: otherModels, timeout: "10 seconds" })
        const use = Effect.gen(function*() {
          const vectors = yield* (yield* Embeddings).embedDocuments(["Alice repaired the telescope."])
          assert.strictEqual(vectors.length, 1)
          const scores = yield* (yield* Reranker).score("telescope", ["Alice repaired the telescope.", "Dogs."])
          assert.strictEqual(scores.length, 2)
        })
        yield* Effect.provide(use, Layer.mergeAll(embedder, reranker))
        yield* Effect.provide(use, Layer.mergeAll(reranker, embedder))
      }),
    120_000
  )
})
