/**
 * The embedding layers: `Embeddings` plus `effect/ai`'s `EmbeddingModel` and `EmbeddingModel.Dimensions`, from
 * the provider `SERVICE_API_EMBEDDINGS_PROVIDER` names (`glove`, offline, by default; `onnx`; `openai`), and the
 * explicit constructors tests and embedders call. The GloVe table layer is one shared value, so the embedder and
 * the word-level service built in the same application load it once.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Config, Context, Effect, Layer, Option, type Scope } from "effect"
import { AiError, EmbeddingModel } from "effect/ai"
import { FetchHttpClient, type HttpClient } from "effect/http"
import * as Path from "node:path"
import { EngramConfig } from "../../../src/config/EngramConfig.ts"
import { EmbeddingError, Embeddings } from "../../../src/models/Embeddings.ts"
import * as GloveEmbedder from "./GloveEmbedder.ts"
import { GloveTable, type GloveTableOptions } from "./GloveTable.ts"
import { GloveWords } from "./GloveWords.ts"
import * as OnnxEmbedder from "./OnnxEmbedder.ts"
import * as OpenAiEmbedder from "./OpenAiEmbedder.ts"

/** Everything an embeddings layer provides. */
export type EmbeddingServices = Embeddings | EmbeddingModel.EmbeddingModel | EmbeddingModel.Dimensions

export const DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

/** `<dataDir>/models`: the GloVe cache and transformers.js downloads, unless `SERVICE_API_EMBEDDINGS_CACHE_DIR`. */
export const modelsCacheDir = (dataDir: string) => Path.join(dataDir, "models")

/**
 * Where converted and downloaded model files live. Several data directories on one machine (tests, tenants)
 * can share one cache through `SERVICE_API_EMBEDDINGS_CACHE_DIR` instead of converting GloVe each.
 */
const cacheDirConfig = Config.option(Config.String("SERVICE_API_EMBEDDINGS_CACHE_DIR"))

const resolveCacheDir = Effect.gen(function*() {
  const config = yield* EngramConfig
  const configured = yield* cacheDirConfig
  return Option.getOrElse(configured, () => modelsCacheDir(config.dataDir))
})

const toAiError = (error: EmbeddingError) =>
  AiError.make({
    module: "Embeddings",
    method: "embedMany",
    reason: error.retryable
      ? new AiError.InternalProviderError({ description: error.message })
      : new AiError.UnknownError({ description: error.message })
  })

/**
 * A span per embedding batch (documents) and per query, with the model and how many texts: never the texts.
 * Every provider passes through here, so the spans look the same whichever one is configured.
 */
const traced = (embeddings: Embeddings["Service"]): Embeddings["Service"] => {
  const attributes = {
    "gen_ai.operation.name": "embeddings",
    "gen_ai.provider.name": embeddings.identity.provider,
    "gen_ai.request.model": embeddings.identity.model
  }
  return {
    identity: embeddings.identity,
    embedDocuments: (texts) =>
      embeddings.embedDocuments(texts).pipe(Effect.withSpan("Embeddings.embedDocuments", {
        kind: "client",
        attributes: { ...attributes, "engram.embeddings.texts": texts.length }
      })),
    embedQuery: (text) =>
      embeddings.embedQuery(text).pipe(Effect.withSpan("Embeddings.embedQuery", {
        kind: "client",
        attributes: { ...attributes, "engram.embeddings.texts": 1 }
      }))
  }
}

/**
 * Provides an `Embeddings` implementation together with the `effect/ai` view of it. `EmbeddingModel` has no
 * query/document distinction, so it embeds as documents; callers that search use `Embeddings.embedQuery`.
 */
export const fromEmbeddings = <E, R>(
  make: Effect.Effect<Embeddings["Service"], E, R>
): Layer.Layer<EmbeddingServices, E, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(Effect.gen(function*() {
    const embeddings = traced(yield* make)
    const model = yield* EmbeddingModel.make({
      embedMany: ({ inputs }) =>
        embeddings.embedDocuments(inputs).pipe(
          Effect.map((vectors) => ({
            results: vectors.map((vector) => Array.from(vector)),
            usage: { inputTokens: undefined }
          })),
          Effect.mapError(toAiError)
        )
    })
    return Context.make(Embeddings, embeddings).pipe(
      Context.add(EmbeddingModel.EmbeddingModel, model),
      Context.add(EmbeddingModel.Dimensions, embeddings.identity.dimensions)
    )
  }))

/** Offline GloVe sentence vectors over the table cached in `cacheDir` (converted there on first use). */
export const glove = (options: GloveTableOptions): Layer.Layer<EmbeddingServices, EmbeddingError> =>
  fromEmbeddings(GloveEmbedder.make).pipe(
    Layer.provide(GloveTable.layer(options)),
    Layer.provide(NodeFileSystem.layer)
  )

/** A sentence-transformers ONNX model through transformers.js. */
export const onnx = (options: OnnxEmbedder.OnnxOptions): Layer.Layer<EmbeddingServices, EmbeddingError> =>
  fromEmbeddings(OnnxEmbedder.make(options)).pipe(Layer.provide(NodeFileSystem.layer))

/** An OpenAI-compatible `/embeddings` endpoint, over the `HttpClient` in context. */
export const openai = (
  options: OpenAiEmbedder.OpenAiOptions
): Layer.Layer<EmbeddingServices, EmbeddingError, HttpClient.HttpClient> => fromEmbeddings(OpenAiEmbedder.make(options))

/** The GloVe table of this data directory; one value, so every layer that needs it shares one load. */
export const GloveTableLive: Layer.Layer<GloveTable, EmbeddingError | Config.ConfigError, EngramConfig> = Layer.unwrap(
  Effect.map(resolveCacheDir, (cacheDir) => GloveTable.layer({ cacheDir }))
).pipe(Layer.provide(NodeFileSystem.layer))

/** GloVe sentence vectors over this data directory's table: the same load `GloveWordsLive` uses. */
export const GloveEmbeddingsLive: Layer.Layer<EmbeddingServices, EmbeddingError | Config.ConfigError, EngramConfig> =
  fromEmbeddings(GloveEmbedder.make).pipe(Layer.provide(GloveTableLive))

/** GloVe word vectors and neighbours (for query expansion), whatever the embeddings provider. */
export const GloveWordsLive: Layer.Layer<GloveWords, EmbeddingError | Config.ConfigError, EngramConfig> = GloveWords
  .layer().pipe(
    Layer.provide(GloveTableLive)
  )

const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))

const settings = Config.all({
  provider: Config.Literals(["glove", "onnx", "openai"], "SERVICE_API_EMBEDDINGS_PROVIDER").pipe(
    Config.withDefault("glove" as const)
  ),
  model: optional(Config.String("SERVICE_API_EMBEDDINGS_MODEL")),
  baseUrl: Config.String("SERVICE_API_EMBEDDINGS_BASE_URL").pipe(Config.withDefault(DEFAULT_OPENAI_BASE_URL)),
  apiKey: optional(Config.Redacted("SERVICE_API_EMBEDDINGS_API_KEY")),
  dimensions: optional(Config.Int("SERVICE_API_EMBEDDINGS_DIMENSIONS")),
  batchSize: optional(Config.Int("SERVICE_API_EMBEDDINGS_BATCH_SIZE")),
  timeout: optional(Config.Duration("SERVICE_API_EMBEDDINGS_TIMEOUT")),
  maxRetries: optional(Config.Int("SERVICE_API_EMBEDDINGS_MAX_RETRIES")),
  modelsDir: optional(Config.String("SERVICE_API_MODELS_DIR")),
  dtype: optional(Config.Literals(["fp32", "fp16", "q8", "int8", "uint8", "q4"], "SERVICE_API_EMBEDDINGS_DTYPE")),
  pooling: optional(Config.Literals(["mean", "cls"], "SERVICE_API_EMBEDDINGS_POOLING")),
  queryPrefix: optional(Config.String("SERVICE_API_EMBEDDINGS_QUERY_PREFIX")),
  documentPrefix: optional(Config.String("SERVICE_API_EMBEDDINGS_DOCUMENT_PREFIX")),
  threads: optional(Config.Int("SERVICE_API_EMBEDDINGS_THREADS"))
})

/** Fails the start when a configured dimension disagrees with what the model produces. */
const checkDimensions = (expected: number | undefined) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const embeddings = yield* Embeddings
    const { dimensions, model, provider } = embeddings.identity
    if (expected !== undefined && expected !== dimensions) {
      return yield* new EmbeddingError({
        message:
          `SERVICE_API_EMBEDDINGS_DIMENSIONS=${expected} but ${provider}:${model} produces ${dimensions}-dimensional vectors`,
        retryable: false
      })
    }
  }))

/** The provider the environment configures, with its cache under the data directory. */
export const layerConfig: Layer.Layer<EmbeddingServices, EmbeddingError | Config.ConfigError, EngramConfig> = Layer
  .unwrap(Effect.gen(function*() {
    const value = yield* settings
    const cacheDir = yield* resolveCacheDir
    const chosen = value.provider === "glove"
      ? GloveEmbeddingsLive
      : value.provider === "onnx"
      ? onnx({
        model: value.model ?? OnnxEmbedder.DEFAULT_ONNX_MODEL,
        modelsDir: value.modelsDir,
        cacheDir: Path.join(cacheDir, "transformers"),
        dtype: value.dtype,
        pooling: value.pooling,
        queryPrefix: value.queryPrefix,
        documentPrefix: value.documentPrefix,
        batchSize: value.batchSize,
        threads: value.threads
      })
      : openai({
        baseUrl: value.baseUrl,
        apiKey: value.apiKey,
        model: value.model ?? DEFAULT_OPENAI_MODEL,
        dimensions: value.dimensions,
        batchSize: value.batchSize,
        timeout: value.timeout,
        maxRetries: value.maxRetries
      }).pipe(Layer.provide(FetchHttpClient.layer))
    return checkDimensions(value.dimensions).pipe(Layer.provideMerge(chosen))
  }))

/** What the application wires: the configured provider. */
export const EmbeddingsLive = layerConfig
