/**
 * The zip reader on its own: every entry comes back byte for byte, stored or deflated, and each entry is inflated
 * no further than its tightest cap; a header that declares more bytes than the entry holds, and damaged deflate
 * data, are refused with their reason. (Hostile archives over HTTP: `test/http/codebases.test.ts`.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { type ArchiveLimits, readZip } from "../../src/codebases/source/ZipReader.ts"
import { makeZip } from "../support/ZipWriter.ts"

const limits: ArchiveLimits = { maxFiles: 1000, maxFileBytes: 2 * 1024 * 1024, maxTotalBytes: 50 * 1024 * 1024, maxRatio: 100 }

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
        assert.deepStrictEqual(Buffer.from(entry.bytes), typeof expected === "string" ? Buffer.from(expected) : Buffer.from(expected), entries[i]!.name)
      })
    }))

  it.effect("refuses an entry holding fewer bytes than its header declares", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* refusal(makeZip([{ name: "short.ts", data: "abc".repeat(100), declaredSize: 400 }])), "size_mismatch")
    }))

  it.effect("refuses an entry past the tightest cap, whichever it is", () =>
    Effect.gen(function*() {
      const zeros = new Uint8Array(1_500_000)
      assert.strictEqual(yield* refusal(makeZip([{ name: "bomb.bin", data: zeros }])), "compression_ratio")
      assert.strictEqual(yield* refusal(makeZip([{ name: "a.txt", data: "a".repeat(900_000) }, { name: "b.txt", data: "b".repeat(900_000) }]),
        { ...limits, maxRatio: 10_000, maxTotalBytes: 1_000_000 }), "archive_too_large")
      assert.strictEqual(yield* refusal(makeZip([{ name: "liar.txt", data: "c".repeat(3_000_000), declaredSize: 10 }])), "size_mismatch")
    }))

  it.effect("refuses damaged deflate data", () =>
    Effect.gen(function*() {
      const bytes = makeZip([{ name: "broken.ts", data: "const broken = true\n".repeat(50) }])
      bytes[30 + "broken.ts".length] = 0xff
      assert.strictEqual(yield* refusal(bytes), "not_a_zip")
    }))
})
