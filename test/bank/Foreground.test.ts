/**
 * Background slices wait for a lull between requests, but never longer than the longest wait: under a steady
 * stream of requests background work slows down, it does not stop.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Foreground } from "../../src/bank/Foreground.ts"

describe("Foreground", () => {
  it.effect("a background slice starts when the last request ends", () =>
    Effect.gen(function*() {
      const foreground = yield* Foreground
      const release = yield* Deferred.make<void>()
      const request = yield* Effect.forkChild(foreground.request(Deferred.await(release)))
      yield* Effect.yieldNow
      assert.strictEqual(yield* foreground.inFlight, 1)
      const slice = yield* Effect.forkChild(foreground.yieldToRequests)
      yield* TestClock.adjust("100 millis")
      assert.isUndefined(slice.pollUnsafe())
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(request)
      yield* Fiber.join(slice)
      assert.strictEqual(yield* foreground.inFlight, 0)
    }).pipe(Effect.provide(Foreground.layerWith("1 second"))))

  it.effect("under requests that never stop, a slice still starts after the longest wait", () =>
    Effect.gen(function*() {
      const foreground = yield* Foreground
      yield* Effect.forkChild(foreground.request(Effect.never))
      yield* Effect.yieldNow
      const slice = yield* Effect.forkChild(foreground.yieldToRequests)
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(slice.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(slice)
    }).pipe(Effect.provide(Foreground.layerWith("1 second"))))

  it.effect("with nothing in flight, a slice starts at once", () =>
    Effect.gen(function*() {
      const foreground = yield* Foreground
      yield* foreground.yieldToRequests
      // A failed request still leaves the count.
      yield* Effect.exit(foreground.request(Effect.fail("boom")))
      assert.strictEqual(yield* foreground.inFlight, 0)
      yield* foreground.yieldToRequests
    }).pipe(Effect.provide(Foreground.layerWith("1 second"))))
})
