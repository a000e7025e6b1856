/**
 * An embedding as a bind parameter: pgvector's text form `[1,2,3]`, sent untyped so PostgreSQL takes the type from
 * the statement — `INSERT ... VALUES (${param(e)})` and `embedding <=> ${param(q)}` both work without a cast. (The
 * driver cannot infer a type for a `Float32Array`, and a `number[]` binds as an integer or float8 array depending on
 * its values.) In a context with no vector on the other side, write `::vector`. The binary codec that decodes vector
 * columns is the storage layer's (`layers/storage/PgVector.ts`).
 */

/** An embedding as callers hold it. Rows always decode to `Float32Array`, the precision pgvector stores. */
export type Embedding = Float32Array | ReadonlyArray<number>

export const param = (embedding: Embedding): string => `[${Array.prototype.join.call(embedding, ",")}]`
