/**
 * The model layers chosen by configuration: embeddings (offline GloVe sentence vectors by default) and the
 * language model (`SERVICE_API_LLM_PROVIDER`, `none` by default so the offline extractor and deterministic
 * fallbacks run), and the optional cross-encoder reranker (`SERVICE_API_RERANKER_PROVIDER`, `none` by default).
 */
import { Layer } from "effect"
import { EmbeddingsLive } from "./models/embeddings/EmbeddingsLive.ts"
import * as LlmLive from "./models/llm/LlmLive.ts"
import { RerankerLive } from "./models/RerankerLive.ts"
import { WordVectorsLive } from "./models/WordVectorsLive.ts"

export const ModelsLive = Layer.mergeAll(EmbeddingsLive, LlmLive.layer, WordVectorsLive, RerankerLive)
