/**
 * pgvector's binary codec and parameter text form, without a database (the SQL tests cover them end to end).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as PgVector from "../../../layers/storage/PgVector.ts"

describe("PgVector", () => {
  it.effect("writes the text form pgvector parses, at float32 precision", () =>
    Effect.sync(() => {
      assert.strictEqual(PgVector.param([1, -0.5, 0]), "[1,-0.5,0]")
      const single = new Float32Array([0.1])
      assert.strictEqual(Math.fround(Number(PgVector.param(single).slice(1, -1))), single[0])
    }))

  it.effect("decodes the binary form: int16 dimensions, int16 unused, big-endian float32 elements", () =>
    Effect.sync(() => {
      const bytes = Uint8Array.of(0, 2, 0, 0, 0x3f, 0x80, 0, 0, 0xc0, 0x20, 0, 0)
      assert.deepStrictEqual(Result.getOrThrow(PgVector.codec.decode(bytes)), new Float32Array([1, -2.5]))
      const embedding = new Float32Array([0.25, -3, 1e-7])
      const encoded = Result.getOrThrow(PgVector.codec.encode(embedding))
      assert.deepStrictEqual(Result.getOrThrow(PgVector.codec.decode(encoded)), embedding)
    }))

  it.effect("rejects bytes whose length does not match their dimension count", () =>
    Effect.sync(() => {
      assert.isTrue(Result.isFailure(PgVector.codec.decode(Uint8Array.of(0, 2, 0, 0, 0x3f, 0x80, 0, 0))))
      assert.isTrue(Result.isFailure(PgVector.codec.decode(Uint8Array.of(0))))
    }))
})
