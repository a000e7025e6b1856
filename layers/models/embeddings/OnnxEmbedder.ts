/**
 * Sentence embeddings from any sentence-transformers ONNX model through `@huggingface/transformers`
 * (feature extraction, pooled, L2-normalised). With a local models directory remote downloads are switched off,
 * so it never reaches for the network; otherwise transformers.js downloads once into the cache directory.
 *
 * Pooling: an explicit setting wins, then the model's own `1_Pooling/config.json` (in a local copy), then the
 * model family — CLS for BGE, Arctic-Embed and mxbai-embed (trained that way), mean for the rest (MiniLM, MPNet,
 * E5, GTE). Query instructions follow the family too: BGE v1.5 English and the others that share its
 * instruction prefix queries with "Represent this sentence for searching relevant passages: "; E5 and Nomic use
 * their query/passage prefixes. transformers.js keeps its settings in one global `env`, which this layer sets.
 */
import { Effect, FileSystem, Schema, Semaphore } from "effect"
import * as Path from "node:path"
import { EmbeddingError, Embeddings } from "../../../src/models/Embeddings.ts"
import { type FileOptions, loadTransformers, type Transformers } from "../Transformers.ts"

export const DEFAULT_ONNX_MODEL = "BAAI/bge-small-en-v1.5"

export type OnnxPooling = "mean" | "cls"
export type OnnxDtype = "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4"

export interface OnnxOptions {
  /** A model id (`BAAI/bge-small-en-v1.5`) or a folder name under `modelsDir`. */
  readonly model: string
  /** Local model copies (`<modelsDir>/<model>/onnx/model_quantized.onnx`); disables remote downloads. */
  readonly modelsDir?: string | undefined
  /** Where transformers.js stores downloads when remote models are allowed. */
  readonly cacheDir?: string | undefined
  /** Weights to load. Default `q8` (`onnx/model_quantized.onnx`), falling back to `fp32` when the repo has none. */
  readonly dtype?: OnnxDtype | undefined
  readonly pooling?: OnnxPooling | undefined
  readonly queryPrefix?: string | undefined
  readonly documentPrefix?: string | undefined
  /** Texts per inference call. Default 32. */
  readonly batchSize?: number | undefined
  /** ONNX Runtime intra-op threads. Default: ONNX Runtime's own choice. */
  readonly threads?: number | undefined
}

const RETRIEVAL_INSTRUCTION = "Represent this sentence for searching relevant passages: "

/** Query/document prefixes a model family was trained with; matched on the model id. */
const FAMILY_PREFIXES: ReadonlyArray<{ readonly pattern: RegExp; readonly query: string; readonly document: string }> =
  [
    {
      pattern: /bge-[a-z]+-en-v1\.5|snowflake-arctic-embed|mxbai-embed-large/i,
      query: RETRIEVAL_INSTRUCTION,
      document: ""
    },
    { pattern: /(^|\/)(multilingual-)?e5-/i, query: "query: ", document: "passage: " },
    { pattern: /nomic-embed-text/i, query: "search_query: ", document: "search_document: " }
  ]

const CLS_FAMILIES = /bge|snowflake-arctic-embed|mxbai-embed/i

const PoolingConfig = Schema.Struct({
  pooling_mode_cls_token: Schema.optional(Schema.Boolean),
  pooling_mode_mean_tokens: Schema.optional(Schema.Boolean)
})

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The pooling the model was trained with, from its sentence-transformers config when a local copy has one. */
const resolvePooling = Effect.fnUntraced(function*(options: OnnxOptions) {
  if (options.pooling !== undefined) return options.pooling
  const fallback: OnnxPooling = CLS_FAMILIES.test(options.model) ? "cls" : "mean"
  if (options.modelsDir === undefined) return fallback
  const fs = yield* FileSystem.FileSystem
  const file = Path.join(options.modelsDir, options.model, "1_Pooling", "config.json")
  const config = yield* fs.readFileString(file).pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.fromJsonString(PoolingConfig))),
    Effect.option
  )
  if (config._tag === "None") return fallback
  if (config.value.pooling_mode_cls_token === true) return "cls"
  if (config.value.pooling_mode_mean_tokens === true) return "mean"
  return fallback
})

const loadPipeline = (
  transformers: Transformers,
  modelId: string,
  fileOptions: FileOptions,
  options: OnnxOptions,
  dtype: OnnxDtype
) =>
  Effect.tryPromise({
    try: () =>
      transformers.pipeline("feature-extraction", modelId, {
        ...fileOptions,
        dtype,
        ...(options.threads === undefined ? {} : { session_options: { intraOpNumThreads: options.threads } })
      }),
    catch: (error) => error
  })

export const make = Effect.fnUntraced(function*(options: OnnxOptions) {
  const { transformers, modelId, fileOptions } = yield* loadTransformers(options).pipe(
    Effect.mapError((error) => new EmbeddingError({ message: error.message, retryable: false }))
  )
  const pooling = yield* resolvePooling(options)
  const family = FAMILY_PREFIXES.find(({ pattern }) => pattern.test(options.model))
  const queryPrefix = options.queryPrefix ?? family?.query ?? ""
  const documentPrefix = options.documentPrefix ?? family?.document ?? ""
  const batchSize = Math.max(1, options.batchSize ?? 32)
  const where = options.modelsDir === undefined
    ? "(downloads allowed)"
    : `in ${options.modelsDir} (remote downloads are off when SERVICE_API_MODELS_DIR is set)`

  const extractor = yield* Effect.acquireRelease(
    loadPipeline(transformers, modelId(options.model), fileOptions, options, options.dtype ?? "q8").pipe(
      Effect.catchIf(
        (error) => options.dtype === undefined && error instanceof transformers.ModelFileNotFoundError,
        () =>
          Effect.logWarning(`${options.model} has no quantized ONNX weights; loading fp32`).pipe(
            Effect.andThen(loadPipeline(transformers, modelId(options.model), fileOptions, options, "fp32"))
          )
      ),
      Effect.mapError((error) =>
        new EmbeddingError({
          message: `cannot load ONNX model ${options.model} ${where}: ${describe(error)}`,
          retryable: false
        })
      )
    ),
    (extractor) => Effect.promise(() => extractor.dispose())
  )
  const hiddenSize = (extractor.model.config as { readonly hidden_size?: unknown }).hidden_size
  if (typeof hiddenSize !== "number") {
    return yield* new EmbeddingError({ message: `${options.model} has no hidden_size in its config`, retryable: false })
  }

  // One inference at a time, one batch per turn: a query waits for at most one document batch.
  const turn = yield* Semaphore.make(1)
  const runBatch = (texts: Array<string>) =>
    turn.withPermits(1)(Effect.tryPromise({
      try: () => extractor(texts, { pooling, normalize: true }).then((output) => output.data as Float32Array),
      catch: (error) => new EmbeddingError({ message: `ONNX inference failed: ${describe(error)}`, retryable: false })
    }))

  /** Embeds in batches of similar length (less padding), returning vectors in input order. */
  const embed = Effect.fnUntraced(function*(texts: ReadonlyArray<string>, prefix: string) {
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length)
    const vectors = new Array<Float32Array>(texts.length)
    for (let start = 0; start < order.length; start += batchSize) {
      const slice = order.slice(start, start + batchSize)
      const data = yield* runBatch(slice.map((i) => prefix + texts[i]!))
      slice.forEach((i, row) => {
        vectors[i] = data.slice(row * hiddenSize, (row + 1) * hiddenSize)
      })
    }
    return vectors
  })

  return Embeddings.of({
    identity: { provider: "onnx", model: options.model, dimensions: hiddenSize },
    embedDocuments: Effect.fn("OnnxEmbedder.embedDocuments")(function*(texts: ReadonlyArray<string>) {
      return yield* embed(texts, documentPrefix)
    }),
    embedQuery: Effect.fn("OnnxEmbedder.embedQuery")(function*(text: string) {
      const [vector] = yield* embed([text], queryPrefix)
      return vector!
    })
  })
})
