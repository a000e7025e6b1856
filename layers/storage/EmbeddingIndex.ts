/**
 * The HNSW index for the configured embedding dimension. Embedding columns carry no fixed dimension (it follows
 * the model), so the index is a partial expression index per dimension, created at start when missing.
 * Queries must use the same expression — `embedding::vector(D)` with `vector_dims(embedding) = D` — to use it.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Embeddings } from "../../src/models/Embeddings.ts"

export const EmbeddingIndexLive = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const embeddings = yield* Embeddings
  const dims = Math.trunc(embeddings.identity.dimensions)
  const name = sql(`memory_units_embedding_hnsw_${dims}`)
  const d = sql.literal(String(dims))
  yield* sql`CREATE INDEX IF NOT EXISTS ${name} ON memory_units
    USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WHERE vector_dims(embedding) = ${d}`
}))
