/**
 * The coalescer behind the per-request statements a retain runs (its bank's row, its audit row, its webhook outbox
 * rows): a request made while no batch runs goes at once; requests made while one runs, or while it waits for the
 * embedded tier's session, go together as the next, each answered with its own result; a failed batch is run again one request at a time, so only the bad request fails; and
 * a caller that holds the database session (inside a transaction) runs alone instead of waiting behind itself.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { makeCoalesced } from "../../src/storage/Coalesced.ts"
import { HoldsDatabaseSession } from "../../src/storage/SessionHolder.ts"
import { databaseTier, testApp } from "../support/TestServer.ts"

/** A statement that records each batch it was given and waits for `release` before answering. */
const recordingStatement = Effect.gen(function*() {
  const batches: Array<ReadonlyArray<number>> = []
  const release = yield* Deferred.make<void>()
  const coalesced = yield* makeCoalesced({
    name: "test.statement",
    maxBatch: 50,
    batch: (ns: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        batches.push(ns)
        yield* Deferred.await(release)
        if (ns.includes(13)) return yield* Effect.fail("13 is a bad request")
        return ns.map((n) => n * 10)
      })
  })
  return { batches, release, coalesced }
})

/** Lets every fiber run until it waits (a batch for its connection, then for `release`). */
const settle = Effect.sleep("100 millis")

// A real client: each batch runs on a connection the coalescer holds (the embedded tier's session).
layer(testApp(), { excludeTestServices: true })("Coalesced", (it) => {
  it.effect("runs the first request at once and those made meanwhile as one batch, each with its own answer", () =>
    Effect.scoped(Effect.gen(function*() {
      const { batches, coalesced, release } = yield* recordingStatement
      const first = yield* Effect.forkChild(coalesced(1))
      yield* settle
      assert.deepStrictEqual(batches, [[1]])
      const rest = yield* Effect.forkChild(Effect.forEach([2, 3, 4, 5, 6], coalesced, { concurrency: "unbounded" }))
      yield* settle
      assert.deepStrictEqual(batches, [[1]], "nothing else runs while the first batch does")
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(first), 10)
      assert.deepStrictEqual(yield* Fiber.join(rest), [20, 30, 40, 50, 60])
      assert.deepStrictEqual(batches, [[1], [2, 3, 4, 5, 6]])
    })))

  // The embedded tier's one session: held by a transaction, every request made meanwhile goes in the next batch.
  it.effect.skipIf(databaseTier !== "pglite")(
    "takes into a batch every request made while it waited for the session",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { batches, coalesced, release } = yield* recordingStatement
        yield* Deferred.succeed(release, undefined)
        const sessionFree = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(sql.withTransaction(Deferred.await(sessionFree)))
        yield* settle
        const first = yield* Effect.forkChild(coalesced(1))
        yield* settle
        const rest = yield* Effect.forkChild(Effect.forEach([2, 3, 4], coalesced, { concurrency: "unbounded" }))
        yield* settle
        assert.deepStrictEqual(batches, [], "nothing runs while the session is held")
        yield* Deferred.succeed(sessionFree, undefined)
        yield* Fiber.join(holder)
        assert.strictEqual(yield* Fiber.join(first), 10)
        assert.deepStrictEqual(yield* Fiber.join(rest), [20, 30, 40])
        assert.deepStrictEqual(batches, [[1, 2, 3, 4]])
      }))
  )

  it.effect("runs a failed batch's requests one by one: only the bad one fails", () =>
    Effect.scoped(Effect.gen(function*() {
      const { batches, coalesced, release } = yield* recordingStatement
      const first = yield* Effect.forkChild(coalesced(1))
      yield* settle
      const rest = yield* Effect.forkChild(
        Effect.forEach([12, 13, 14], (n) => Effect.exit(coalesced(n)), { concurrency: "unbounded" })
      )
      yield* settle
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(first), 10)
      const exits = yield* Fiber.join(rest)
      assert.deepStrictEqual(exits[0], Exit.succeed(120))
      assert.isTrue(Exit.isFailure(exits[1]!))
      assert.deepStrictEqual(exits[2], Exit.succeed(140))
      assert.deepStrictEqual(batches, [[1], [12, 13, 14], [12], [13], [14]])
    })))

  it.effect("lets a caller that holds the database session run alone instead of queueing behind a batch", () =>
    Effect.scoped(Effect.gen(function*() {
      const { batches, coalesced, release } = yield* recordingStatement
      const blocked = yield* Effect.forkChild(coalesced(1))
      yield* settle
      const holder = yield* Effect.forkChild(coalesced(7).pipe(Effect.provideService(HoldsDatabaseSession, true)))
      yield* settle
      assert.deepStrictEqual(batches, [[1], [7]], "the holder's request ran beside the running batch")
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(holder), 70)
      assert.strictEqual(yield* Fiber.join(blocked), 10)
    })))
})
