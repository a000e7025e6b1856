/**
 * The model layers chosen by configuration: embeddings (offline GloVe sentence vectors by default) and the
 * language model (`SERVICE_API_LLM_PROVIDER`, `none` by default so the offline extractor and deterministic
 * fallbacks run).
 */
import { Layer } from "effect"
import { EmbeddingsLive } from "./models/embeddings/EmbeddingsLive.ts"
import * as LlmLive from "./models/llm/LlmLive.ts"
import { WordVectorsLive } from "./models/WordVectorsLive.ts"

export const ModelsLive = Layer.mergeAll(EmbeddingsLive, LlmLive.layer, WordVectorsLive)
