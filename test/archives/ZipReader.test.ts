/**
 * The zip reader on its own: every entry comes back byte for byte, stored or deflated, and each entry is inflated
 * no further than its tightest cap; a header that declares more bytes than the entry holds, and damaged deflate
 * data, are refused with their reason; large entries (inflated off the event loop) come back exactly too, and the
 * whole archive stops at its inflation budget. (Hostile archives over HTTP: `test/codebases/codebases.http.test.ts`, bombs
 * and the event loop: `test/security/`.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { type ArchiveLimits, checkZip, readZip } from "../../src/archives/ZipReader.ts"
import { makeZip } from "../support/ZipWriter.ts"

const limits: ArchiveLimits = {
  maxFiles: 1000,
  maxFileBytes: 2 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
  maxRatio: 100,
  maxInflation: 20,
  inflationFloorBytes: 64 * 1024 * 1024
}

const refusal = (bytes: Uint8Array, caps: ArchiveLimits = limits) =>
  readZip(bytes, caps).pipe(Effect.flip, Effect.map((refused) => refused.reason))

describe("ZipReader", () => {
  it.effect("returns every entry byte for byte, deflated or stored, in archive order", () =>
    Effect.gen(function*() {
      const entries = Array.from({ length: 300 }, (_, i) => ({
        name: `src/dir${i % 7}/file${i}.ts`,
        data: i % 3 === 0 ? randomBytes(1 + (i * 37) % 5000) : `export const v${i} = ${"x".repeat(i * 11)}\n`,
        store: i % 5 === 0
      }))
      const read = yield* readZip(makeZip(entries), limits)
      assert.deepStrictEqual(read.map((entry) => entry.path), entries.map((entry) => entry.name))
      read.forEach((entry, i) => {
        const expected = entries[i]!.data
        assert.deepStrictEqual(
          Buffer.from(entry.bytes),
          typeof expected === "string" ? Buffer.from(expected) : Buffer.from(expected),
          entries[i]!.name
        )
      })
    }))

  it.effect("refuses an entry holding fewer bytes than its header declares", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* refusal(makeZip([{ name: "short.ts", data: "abc".repeat(100), declaredSize: 400 }])),
        "size_mismatch"
      )
    }))

  it.effect("refuses an entry past the tightest cap, whichever it is", () =>
    Effect.gen(function*() {
      const zeros = new Uint8Array(1_500_000)
      assert.strictEqual(yield* refusal(makeZip([{ name: "bomb.bin", data: zeros }])), "compression_ratio")
      assert.strictEqual(
        yield* refusal(
          makeZip([{ name: "a.txt", data: "a".repeat(900_000) }, { name: "b.txt", data: "b".repeat(900_000) }]),
          { ...limits, maxRatio: 10_000, maxTotalBytes: 1_000_000 }
        ),
        "archive_too_large"
      )
      assert.strictEqual(
        yield* refusal(makeZip([{ name: "liar.txt", data: "c".repeat(3_000_000), declaredSize: 10 }])),
        "size_mismatch"
      )
    }))

  it.effect("inflates large entries (streamed through the thread pool) byte for byte; a lying header there is refused too", () =>
    Effect.gen(function*() {
      const large = Buffer.from(randomBytes(700_000).toString("base64"))
      const read = yield* readZip(
        makeZip([{ name: "big.txt", data: large }, { name: "small.txt", data: "tiny" }]),
        limits
      )
      assert.deepStrictEqual(read.map((entry) => entry.path), ["big.txt", "small.txt"])
      assert.isTrue(Buffer.from(read[0]!.bytes).equals(large))
      assert.strictEqual(
        yield* refusal(makeZip([{ name: "liar.txt", data: large, declaredSize: 200_000 }])),
        "size_mismatch"
      )
    }))

  it.effect("stops an archive at its budget: the inflation multiple of its size, no lower than the floor", () =>
    Effect.gen(function*() {
      // Eight entries of 60 KB of zeros: each under the ratio floor, 480 KB in all from a 2 KB archive.
      const zeros = new Uint8Array(60_000)
      const bomb = makeZip(Array.from({ length: 8 }, (_, i) => ({ name: `z${i}.bin`, data: zeros })))
      const tight = { ...limits, maxInflation: 20, inflationFloorBytes: 100_000 }
      assert.strictEqual(yield* refusal(bomb, tight), "archive_ratio")
      // The floor lets a small archive of well-compressing files through.
      assert.strictEqual((yield* readZip(bomb, { ...tight, inflationFloorBytes: 500_000 })).length, 8)
    }))

  it.effect("refuses an entry whose header declares past the ratio before inflating it", () =>
    Effect.gen(function*() {
      const refused = yield* readZip(
        makeZip([{ name: "zeros.bin", data: new Uint8Array(1000), declaredSize: 1_000_000 }]),
        limits
      )
        .pipe(Effect.flip)
      assert.strictEqual(refused.reason, "compression_ratio")
    }))

  it.effect("checkZip applies the same checks and counts what the entries inflate to", () =>
    Effect.gen(function*() {
      const archive = makeZip([{ name: "a.txt", data: "a".repeat(1000) }, { name: "dir/", data: "" }, {
        name: "b.bin",
        data: randomBytes(200_000)
      }])
      assert.deepStrictEqual(yield* checkZip(archive, limits), { files: 2, inflatedBytes: 201_000 })
      const bomb = makeZip([{ name: "zeros.bin", data: new Uint8Array(1_500_000) }])
      assert.strictEqual((yield* Effect.flip(checkZip(bomb, limits))).reason, "compression_ratio")
    }))

  it.effect("refuses damaged deflate data", () =>
    Effect.gen(function*() {
      const bytes = makeZip([{ name: "broken.ts", data: "const broken = true\n".repeat(50) }])
      bytes[30 + "broken.ts".length] = 0xff
      assert.strictEqual(yield* refusal(bytes), "not_a_zip")
    }))
})
