/**
 * Background slices wait for a lull between requests, but never longer than the longest wait: under a steady
 * stream of requests background work slows down, it does not stop. A request that has reached the socket but is not
 * read yet counts too: background work that never leaves microtasks still lets the event loop read it first. After a
 * slice of a job a request waits for, other requests in flight get the session for as long as the slice held it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
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

  it.effect("after a slice a request waits for, other requests get the session as long as the slice held it", () =>
    Effect.gen(function*() {
      const foreground = yield* Foreground
      // Only the request driving the job: the next slice follows at once.
      yield* Effect.forkChild(foreground.request(Effect.never))
      yield* Effect.yieldNow
      yield* foreground.shareAfterSlice(Duration.millis(120))
      // Another request in flight: a pause as long as the slice, at most 250 ms.
      yield* Effect.forkChild(foreground.request(Effect.never))
      yield* Effect.yieldNow
      const short = yield* Effect.forkChild(foreground.shareAfterSlice(Duration.millis(120)))
      yield* TestClock.adjust("119 millis")
      assert.isUndefined(short.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(short)
      const long = yield* Effect.forkChild(foreground.shareAfterSlice(Duration.seconds(3)))
      yield* TestClock.adjust("249 millis")
      assert.isUndefined(long.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(long)
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

describe("Foreground over a socket", () => {
  it.live("a request waiting on a socket is seen before the next slice of work that never leaves microtasks", () =>
    Effect.gen(function*() {
      const foreground = yield* Foreground
      let slices = 0
      // Each slice: a few milliseconds of synchronous work, then a promise that is already settled, as a statement
      // on PGlite is (its WebAssembly runs synchronously, and the driver resumes in a microtask).
      const background = yield* Effect.forkChild(Effect.gen(function*() {
        // Bounded, so that without the lull check's turn of the event loop the test fails instead of hanging.
        while (slices < 1500) {
          yield* foreground.yieldToRequests
          const until = performance.now() + 3
          while (performance.now() < until) { /* busy, as a statement is */ }
          yield* Effect.promise(() => Promise.resolve())
          slices++
        }
      }))
      const waited: Array<number> = []
      const server = createServer((request, response) => {
        waited.push(slices - Number(request.headers["x-slices-at-send"]))
        Effect.runFork(
          foreground.request(Effect.sleep("5 millis")).pipe(
            Effect.ensuring(Effect.sync(() => response.end("ok")))
          )
        )
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as AddressInfo).port
      for (let n = 0; n < 10; n++) {
        yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${port}/`, { headers: { "x-slices-at-send": String(slices) } }).then((r) => r.text())
        )
      }
      yield* Fiber.interrupt(background)
      yield* Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      // Without a turn of the event loop in the lull check, no request was read until the background work ended.
      assert.isAtMost(Math.max(...waited), 2, `slices run while a request waited: ${waited.join(", ")}`)
    }).pipe(Effect.provide(Foreground.layerWith("1 second"))))
})
