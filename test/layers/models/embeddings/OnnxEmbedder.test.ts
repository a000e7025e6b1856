/**
 * The ONNX embedder over the stand-in MiniLM-L6 (real architecture and tokenizer, random weights) in
 * `../shared/models`, offline: loading, shapes, order across length-sorted batches, pooling and query
 * instructions chosen from the model's family. Random weights say nothing about quality; only about plumbing.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { EmbeddingModel } from "effect/ai"
import * as Path from "node:path"
import { onnx } from "../../../../layers/models/embeddings/EmbeddingsLive.ts"
import { Embeddings } from "../../../../src/models/Embeddings.ts"

const modelsDir = Path.resolve("../shared/models")
const standIn = "standin-random-minilm-l6"

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0)

const texts = [
  "A fairly long sentence about the weather in the mountains during the early spring, when snow still lies.",
  "Short one.",
  "Medium length sentence about dogs.",
  "",
  "Another quite long sentence, this one about a conversation between two friends planning a trip to Lisbon.",
  "Cats."
]

/** Embeds with a fresh model layer (for options other than the shared one). */
const withModel = <A, E>(options: Parameters<typeof onnx>[0], use: Effect.Effect<A, E, Embeddings>) =>
  Effect.scoped(Layer.build(onnx(options)).pipe(Effect.flatMap((context) => Effect.provide(use, context))))

layer(onnx({ model: standIn, modelsDir, batchSize: 4 }), { timeout: 120_000 })("OnnxEmbedder", (it) => {
  it.effect("loads the stand-in offline and reports its hidden size", () =>
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      assert.deepStrictEqual(embeddings.identity, { provider: "onnx", model: standIn, dimensions: 384 })
      assert.strictEqual(yield* EmbeddingModel.Dimensions, 384)
    }))

  it.effect("returns unit vectors in input order across length-sorted batches", () =>
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      const batch = yield* embeddings.embedDocuments(texts)
      assert.strictEqual(batch.length, texts.length)
      for (const [i, text] of texts.entries()) {
        assert.strictEqual(batch[i]!.length, 384)
        assert.closeTo(Math.sqrt(cosine(batch[i]!, batch[i]!)), 1, 1e-4)
        const [alone] = yield* embeddings.embedDocuments([text])
        // Padding changes int8 activation scales slightly, so "the same" means nearly identical.
        assert.isTrue(cosine(alone!, batch[i]!) > 0.99, `text ${i} kept its place`)
      }
    }))

  it.effect("embeds queries as well as documents", () =>
    Effect.gen(function*() {
      const embeddings = yield* Embeddings
      const query = yield* embeddings.embedQuery("Medium length sentence about dogs.")
      const [document] = yield* embeddings.embedDocuments(["Medium length sentence about dogs."])
      assert.strictEqual(query.length, 384)
      // MiniLM has no query instruction: a query is embedded exactly like a document.
      assert.isTrue(cosine(query, document!) > 0.9999)
    }))
})

describe("OnnxEmbedder model families", () => {
  it.live(
    "treats a BGE model as BGE: CLS pooling and the retrieval instruction on queries",
    () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "engram-models-" })
        yield* fs.makeDirectory(Path.join(dir, "BAAI"))
        yield* fs.symlink(Path.join(modelsDir, standIn), Path.join(dir, "BAAI", "bge-small-en-v1.5"))
        const text = "Where did Caroline go last May?"
        const asBge = yield* withModel(
          { model: "BAAI/bge-small-en-v1.5", modelsDir: dir },
          Effect.all([
            Embeddings.useSync((e) => e.identity),
            Embeddings.use((e) => e.embedQuery(text)),
            Embeddings.use((e) => e.embedDocuments([text]))
          ])
        )
        const explicit = yield* withModel(
          {
            model: standIn,
            modelsDir,
            pooling: "cls",
            queryPrefix: "Represent this sentence for searching relevant passages: "
          },
          Effect.all([Embeddings.use((e) => e.embedQuery(text)), Embeddings.use((e) => e.embedDocuments([text]))])
        )
        const [identity, bgeQuery, [bgeDocument]] = asBge
        const [clsQuery, [clsDocument]] = explicit
        assert.strictEqual(identity.model, "BAAI/bge-small-en-v1.5")
        assert.isTrue(cosine(bgeQuery, clsQuery) > 0.9999, "CLS pooling with the instruction")
        assert.isTrue(cosine(bgeDocument!, clsDocument!) > 0.9999, "documents without the instruction")
        assert.isTrue(cosine(bgeQuery, bgeDocument!) < 0.9999, "the instruction changes the query")
      }).pipe(Effect.provide(NodeFileSystem.layer)),
    120_000
  )

  it.live("falls back to fp32 weights when a model ships no quantized file", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "engram-models-" })
      const model = Path.join(dir, "fp32-only")
      yield* fs.makeDirectory(Path.join(model, "onnx"), { recursive: true })
      for (
        const file of ["config.json", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt"]
      ) {
        yield* fs.symlink(Path.join(modelsDir, standIn, file), Path.join(model, file))
      }
      yield* fs.symlink(
        Path.join(modelsDir, standIn, "onnx", "model_quantized.onnx"),
        Path.join(model, "onnx", "model.onnx")
      )
      const vector = yield* withModel(
        { model: "fp32-only", modelsDir: dir },
        Embeddings.use((e) => e.embedQuery("hello"))
      )
      assert.strictEqual(vector.length, 384)
    }).pipe(Effect.provide(NodeFileSystem.layer)), 60_000)

  it.live(
    "fails with a clear message, and no download, when the model is not in the models directory",
    () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          withModel({ model: "BAAI/bge-small-en-v1.5", modelsDir }, Effect.map(Embeddings, (e) => e.identity))
        )
        assert.strictEqual(error._tag, "EmbeddingError")
        assert.match(error.message, /cannot load ONNX model BAAI\/bge-small-en-v1\.5/)
        assert.match(error.message, /remote downloads are off/)
      }),
    60_000
  )
})
