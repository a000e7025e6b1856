/**
 * The embedding contract: which model embeds this deployment's memories (its identity and dimension decide
 * whether stored vectors are comparable) and how to embed documents and queries. Implementations live in
 * `layers/models/embeddings/` (offline GloVe sentence vectors, ONNX through transformers.js, any
 * OpenAI-compatible endpoint) and are built on `effect/ai`'s `EmbeddingModel`.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"

export class EmbeddingError extends Schema.TaggedError<EmbeddingError>()("EmbeddingError", {
  message: Schema.String,
  retryable: Schema.Boolean
}) {}

export interface EmbedderIdentity {
  /** `glove`, `onnx` or `openai`. */
  readonly provider: string
  /** The model name; with the provider it identifies the vector space (e.g. `onnx:BAAI/bge-small-en-v1.5`). */
  readonly model: string
  readonly dimensions: number
}

/** The key stored with every embedding (`memory_units.embedding_model`): vectors of two keys are not comparable. */
export const modelKey = (identity: { readonly provider: string; readonly model: string }) =>
  `${identity.provider}:${identity.model}`

export class Embeddings extends Context.Service<Embeddings, {
  readonly identity: EmbedderIdentity
  /** Embeds stored text (facts, chunks). Vectors are L2-normalised, in input order. */
  readonly embedDocuments: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbeddingError>
  /** Embeds a search query (some models prefix queries differently from documents). */
  readonly embedQuery: (text: string) => Effect.Effect<Float32Array, EmbeddingError>
}>()("engram/models/Embeddings") {}
