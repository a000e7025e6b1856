/** The per-bank snapshot cache: built lazily and once, rebuilt after writes, released on passivation or when idle. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { GraphSource } from "../../../../src/memory/recall/graph/GraphSnapshot.ts"
import { GraphSnapshots } from "../../../../src/memory/recall/graph/GraphSnapshots.ts"

/** A loader that counts its calls, takes a second of (test) time and reads the bank's current links. */
const loader = (links: Array<readonly [string, string]>) => {
  let loads = 0
  const load = Effect.gen(function*() {
    loads++
    yield* Effect.sleep("1 second")
    return {
      nodeIds: ["a", "b", "c"],
      links: links.map(([fromId, toId]) => ({ fromId, toId, linkType: "semantic", weight: 1 }))
    } satisfies GraphSource
  })
  return { load, loads: () => loads }
}

/** Runs `get` in a fiber and moves test time past the load. */
const getNow = Effect.fn(function*(bankId: string, load: Effect.Effect<GraphSource>) {
  const snapshots = yield* GraphSnapshots
  const fiber = yield* Effect.forkChild(snapshots.get(bankId, load))
  yield* TestClock.adjust("1 second")
  return yield* Fiber.join(fiber)
})

describe("GraphSnapshots", () => {
  it.effect("builds a bank's snapshot on first use only", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const { load, loads } = loader([["a", "b"]])
      assert.strictEqual(yield* snapshots.size, 0)
      const first = yield* getNow("bank", load)
      const second = yield* snapshots.get("bank", load)
      assert.strictEqual(second, first)
      assert.strictEqual(loads(), 1)
      assert.strictEqual(first.edgeCount, 2)
      assert.strictEqual(yield* snapshots.size, first.byteSize)
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("shares one build between concurrent callers", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const { load, loads } = loader([["a", "b"]])
      const fibers = yield* Effect.forEach(
        Array.from({ length: 5 }),
        () => Effect.forkChild(snapshots.get("bank", load))
      )
      yield* TestClock.adjust("1 second")
      const results = yield* Effect.forEach(fibers, Fiber.join)
      assert.strictEqual(loads(), 1)
      for (const result of results) assert.strictEqual(result, results[0])
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("rebuilds after invalidation, with the bank's new links", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const links: Array<readonly [string, string]> = [["a", "b"]]
      const { load, loads } = loader(links)
      const before = yield* getNow("bank", load)
      links.push(["b", "c"])
      yield* snapshots.invalidate("bank")
      const after = yield* getNow("bank", load)
      assert.strictEqual(loads(), 2)
      assert.strictEqual(before.edgeCount, 2)
      assert.strictEqual(after.edgeCount, 4)
      assert.strictEqual(yield* snapshots.get("bank", load), after)
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("does not keep a build that an invalidation overtook", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const { load, loads } = loader([["a", "b"]])
      const fiber = yield* Effect.forkChild(snapshots.get("bank", load))
      yield* TestClock.adjust("500 millis")
      yield* snapshots.invalidate("bank")
      yield* TestClock.adjust("500 millis")
      const stale = yield* Fiber.join(fiber)
      const fresh = yield* getNow("bank", load)
      assert.strictEqual(loads(), 2)
      assert.notStrictEqual(fresh, stale)
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("does not cache a failed load", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const failure = yield* snapshots.get("bank", Effect.fail("database down")).pipe(Effect.flip)
      assert.strictEqual(failure, "database down")
      const { load, loads } = loader([["a", "b"]])
      const snapshot = yield* getNow("bank", load)
      assert.strictEqual(loads(), 1)
      assert.strictEqual(snapshot.edgeCount, 2)
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("releases a bank's snapshot on drop", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const { load, loads } = loader([["a", "b"]])
      yield* getNow("bank", load)
      yield* getNow("other", load)
      yield* snapshots.drop("bank")
      const other = yield* snapshots.get("other", load)
      assert.strictEqual(yield* snapshots.size, other.byteSize)
      yield* getNow("bank", load)
      assert.strictEqual(loads(), 3)
    }).pipe(Effect.provide(GraphSnapshots.layer)))

  it.effect("releases snapshots left unused for the idle time-to-live", () =>
    Effect.gen(function*() {
      const snapshots = yield* GraphSnapshots
      const { load, loads } = loader([["a", "b"]])
      yield* getNow("busy", load)
      yield* getNow("idle", load)
      for (let minute = 0; minute < 4; minute++) {
        yield* TestClock.adjust("1 minute")
        yield* snapshots.get("busy", load)
      }
      assert.strictEqual(loads(), 2)
      const busy = yield* snapshots.get("busy", load)
      assert.strictEqual(yield* snapshots.size, busy.byteSize)
      yield* getNow("idle", load)
      assert.strictEqual(loads(), 3)
    }).pipe(Effect.provide(GraphSnapshots.layerWith({ idleTimeToLive: "3 minutes" }))))
})
