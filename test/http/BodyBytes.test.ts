/**
 * A body gathered by `collectBody` is the bytes that arrived, in order, in a buffer of exactly their length — whether
 * its length was declared and right, declared and wrong, or unknown — and a large body of unknown length is joined
 * in several turns of the event loop, not one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { collectBody } from "../../src/http/BodyBytes.ts"

const joined = (chunks: ReadonlyArray<Uint8Array>) => new Uint8Array(Buffer.concat(chunks))

const gather = (chunks: ReadonlyArray<Uint8Array>, declared: number | undefined, earlyBytes?: number) =>
  Effect.gen(function*() {
    const body = collectBody(declared, earlyBytes)
    for (const chunk of chunks) body.push(chunk)
    return yield* body.finish
  })

const chunksArb = fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 })

describe("collectBody", () => {
  it.effect("gives the bytes that arrived, whatever the declared length said", () =>
    Effect.sync(() =>
      fc.assert(
        fc.property(
          chunksArb,
          fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
          fc.nat(1_000),
          (chunks, error, earlyBytes) => {
            const whole = joined(chunks)
            const declared = error === undefined ? undefined : Math.max(0, whole.length + error)
            // Past `earlyBytes` the body goes into a buffer of the declared length: small here, so both ways are taken.
            const bytes = Effect.runSync(gather(chunks, declared, earlyBytes))
            assert.deepStrictEqual(bytes, whole)
            // A buffer of its own: `arrayBuffer` hands the whole ArrayBuffer to the route.
            assert.strictEqual(bytes.buffer.byteLength, whole.length)
          }
        ),
        { numRuns: 500 }
      )
    ))

  it.effect("joins a large body of unknown length over several turns of the event loop", () =>
    Effect.gen(function*() {
      const chunks = Array.from({ length: 400 }, (_, i) => new Uint8Array(64 * 1024).fill(i % 251))
      let turns = 0
      let done = false
      // A chain of setImmediate callbacks counts the turns of the event loop the join let through.
      const tick = (): void => void setImmediate(() => done || (turns++, tick()))
      tick()
      const bytes = yield* gather(chunks, undefined)
      done = true
      assert.deepStrictEqual(bytes, joined(chunks))
      // 25 MiB in slices of 4 MiB: at least five turns came between them.
      assert.isAtLeast(turns, 5)
    }))
})
