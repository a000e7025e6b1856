/**
 * pgvector's `vector` type for `@effect/sql-pg`: the binary codec that turns embedding columns into `Float32Array`s,
 * its registration under the OID the extension got in this database, and the text form that binds an embedding as
 * a query parameter. It must not create the extension; the storage layer does that first.
 */
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

export { type Embedding, param } from "../../src/storage/VectorParam.ts"
import type { Embedding } from "../../src/storage/VectorParam.ts"

/**
 * The binary wire format: int16 dimensions, int16 unused, then each element as a big-endian float32.
 */
export const codec: PgTypes.Codec<Embedding> = {
  decode: (bytes) => read(bytes, 0, bytes.length),
  read,
  encode: (embedding) => {
    const bytes = new Uint8Array(4 + 4 * embedding.length)
    const view = new DataView(bytes.buffer)
    view.setInt16(0, embedding.length)
    for (let index = 0; index < embedding.length; index++) view.setFloat32(4 + 4 * index, embedding[index]!)
    return Result.succeed(bytes)
  }
}

function read(bytes: Uint8Array, offset: number, size: number): Result.Result<Float32Array, PgTypes.CodecError> {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, size)
  const dimensions = size >= 4 ? view.getInt16(0) : -1
  if (dimensions < 0 || size !== 4 + 4 * dimensions) {
    return Result.fail(new PgTypes.CodecError({ message: `pgvector: ${size} bytes do not hold a vector` }))
  }
  const embedding = new Float32Array(dimensions)
  for (let index = 0; index < dimensions; index++) embedding[index] = view.getFloat32(4 + 4 * index)
  return Result.succeed(embedding)
}

/**
 * Looks up the OIDs the `vector` extension's type and its array type have in this database and registers the codec
 * for both. Run it once per client, after `CREATE EXTENSION vector`; a client without it closes its connection the
 * first time a `vector` column is selected.
 */
export const register = Effect.fnUntraced(function*(
  sql: SqlClient.SqlClient,
  registry: PgTypes.Registry
): Effect.fn.Return<void, SqlError | VectorExtensionMissing> {
  const rows = yield* sql<{ readonly oid: number; readonly typarray: number }>`
    SELECT t.oid, t.typarray
    FROM pg_catalog.pg_type t
    JOIN pg_catalog.pg_extension e ON e.extnamespace = t.typnamespace AND e.extname = 'vector'
    WHERE t.typname = 'vector'`
  const row = rows[0]
  if (row === undefined) return yield* new VectorExtensionMissing({ message: "the vector extension is not installed" })
  registry.register(row.oid, codec, { arrayOid: row.typarray })
})

/** The `vector` extension is not installed in the database the client is connected to. */
export class VectorExtensionMissing extends Schema.TaggedError<VectorExtensionMissing>()("VectorExtensionMissing", {
  message: Schema.String
}) {}
