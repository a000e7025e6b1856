/**
 * `real` (float4) columns read back as the number that was written. The driver decodes a float4 as the exact value
 * of its 32 bits, so a confidence stored as 0.6 came back as 0.6000000238418579 in API responses. This codec returns
 * the shortest decimal that is the same float32 (as PostgreSQL prints a `real` in text), so it reads 0.6.
 *
 * It costs up to ~1 µs per value (nine `toPrecision` calls at worst), nothing for reads of a page of rows; a read of
 * millions of values that needs only the float32 (a brain build's link weights) selects `::float8` instead, which
 * decodes as a plain double.
 */
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Result from "effect/Result"

const float4Oid = 700
const float4ArrayOid = 1021

/** The shortest decimal (at most nine significant digits) that rounds to the same float32 as `value`. */
export const shortestFloat32 = (value: number): number => {
  if (!Number.isFinite(value) || value === 0) return value
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits))
    if (Math.fround(candidate) === value) return candidate
  }
  return Number(value.toPrecision(9))
}

const read = (bytes: Uint8Array, offset: number, size: number): Result.Result<number, PgTypes.CodecError> =>
  size === 4
    ? Result.succeed(shortestFloat32(new DataView(bytes.buffer, bytes.byteOffset + offset, 4).getFloat32(0)))
    : Result.fail(new PgTypes.CodecError({ message: `float4: ${size} bytes do not hold a real` }))

export const codec: PgTypes.Codec<number> = {
  decode: (bytes) => read(bytes, 0, bytes.length),
  read,
  encode: (value) => {
    const bytes = new Uint8Array(4)
    new DataView(bytes.buffer).setFloat32(0, value)
    return Result.succeed(bytes)
  }
}

/** Replaces the driver's float4 codec (and its array's) in a client's registry. */
export const register = (registry: PgTypes.Registry): void =>
  registry.register(float4Oid, codec, { arrayOid: float4ArrayOid })
