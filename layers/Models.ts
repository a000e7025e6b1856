/**
 * The model layers chosen by configuration: embeddings (offline GloVe by default) and the language model
 * (none by default, so the offline extractor and deterministic fallbacks run).
 */
import { Layer } from "effect"
import { Llm } from "../src/models/Llm.ts"
import { EmbeddingsLive } from "./models/embeddings/EmbeddingsLive.ts"

export const ModelsLive = Layer.mergeAll(EmbeddingsLive, Llm.layerNone)
