/**
 * The HNSW index for the configured embedding dimension. Embedding columns carry no fixed dimension (it follows
 * the model), so the index is a partial expression index per dimension, created at start when missing.
 * Queries must use the same expression — `embedding::vector(D)` with `vector_dims(embedding) = D` — to use it.
 * Built with a smaller graph than pgvector's defaults (m 16, ef_construction 64): every retained memory pays for
 * its insertion into this index, and at the defaults that was most of a memory's write cost (3.4 ms of 7 on PGlite;
 * docs/write-path.md), while recall on a loaded brain does not read it at all. m 8 / ef_construction 32 inserts in
 * about half the time of m 12 / 40, and retain's neighbour search looks at 80 candidates instead of 40, which
 * finds more of the true nearest than m 12 / 40 did with 40 (`node bench/hnsw-quality.ts`: recall@10 0.993 against
 * 0.989 at 50k memories). An index built before keeps its options until it is dropped (the next start builds it
 * again with these).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Embeddings } from "../../src/models/Embeddings.ts"

/** pgvector requires ef_construction ≥ 2 m. */
export const hnswOptions = { m: 8, efConstruction: 32 }

export const EmbeddingIndexLive = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const embeddings = yield* Embeddings
  const dims = Math.trunc(embeddings.identity.dimensions)
  const name = sql(`memory_units_embedding_hnsw_${dims}`)
  const d = sql.literal(String(dims))
  const options = sql.literal(`m = ${hnswOptions.m}, ef_construction = ${hnswOptions.efConstruction}`)
  yield* sql`CREATE INDEX IF NOT EXISTS ${name} ON memory_units
    USING hnsw ((embedding::vector(${d})) vector_cosine_ops) WITH (${options}) WHERE vector_dims(embedding) = ${d}`
}))
