/**
 * The cross-encoder reranker chosen by `SERVICE_API_RERANKER_PROVIDER`: `none` (the default; recall's
 * deterministic reranker runs alone) or `onnx` (a transformers.js cross-encoder, from `SERVICE_API_MODELS_DIR`
 * when set, otherwise downloaded once into the models cache).
 */
import { Config, Effect, Layer, Option } from "effect"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { Reranker } from "../../src/models/Reranker.ts"
import { modelsCacheDir } from "./embeddings/EmbeddingsLive.ts"
import * as OnnxReranker from "./rerank/OnnxReranker.ts"

const optional = <A>(config: Config.Config<A>) => Config.option(config).pipe(Config.map(Option.getOrUndefined))

const settings = Config.all({
  provider: Config.Literals(["none", "onnx"], "SERVICE_API_RERANKER_PROVIDER").pipe(
    Config.withDefault("none" as const)
  ),
  model: Config.String("SERVICE_API_RERANKER_MODEL").pipe(Config.withDefault(OnnxReranker.DEFAULT_RERANKER_MODEL)),
  modelsDir: optional(Config.String("SERVICE_API_MODELS_DIR")),
  cacheDir: optional(Config.String("SERVICE_API_EMBEDDINGS_CACHE_DIR")),
  maxCandidates: optional(Config.Int("SERVICE_API_RERANKER_MAX_CANDIDATES")),
  timeout: optional(Config.Duration("SERVICE_API_RERANKER_TIMEOUT")),
  batchSize: optional(Config.Int("SERVICE_API_RERANKER_BATCH_SIZE")),
  threads: optional(Config.Int("SERVICE_API_RERANKER_THREADS"))
})

/** A transformers.js cross-encoder as the `Reranker`. */
export const onnx = (options: OnnxReranker.OnnxRerankerOptions) => Layer.effect(Reranker, OnnxReranker.make(options))

export const RerankerLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* EngramConfig
  const chosen = yield* settings
  if (chosen.provider === "none") return Layer.empty
  return onnx({
    model: chosen.model,
    modelsDir: chosen.modelsDir,
    cacheDir: chosen.cacheDir ?? modelsCacheDir(config.dataDir),
    maxCandidates: chosen.maxCandidates,
    timeout: chosen.timeout,
    batchSize: chosen.batchSize,
    threads: chosen.threads
  })
}))
