/**
 * One statement for what many concurrent requests each ask of the database once: a retain reads its bank's row
 * before it starts, and writes its audit row and its event's webhook outbox rows after its group commits. Fifty
 * clients retaining into one bank made each of those a statement of its own, and on the embedded tier every
 * statement waits its turn at the one session (100–400 ms under that load, `docs/isolation.md`), so a retain spent
 * more time queued behind its neighbours' one-row statements than in its own group's transaction.
 *
 * A coalescer keeps at most one batch in flight, and takes its requests only once it holds a connection (on the
 * embedded tier, the session, after everything queued for it): a request that arrives while nothing is queued goes at
 * once, and every request that arrives while the batch waits for the session joins it. Taking them before waiting made
 * every stage two waits — a batch of one, then the rest behind it — and fifty clients' retains slower than before
 * (`docs/isolation.md`). The batch runs after every request in it was made, so a read in it is as fresh as each
 * request's own would have been. A caller inside a transaction runs its request alone on its transaction's connection
 * (a batch would wait for the session that caller holds). If a batch fails, its requests are run again one by one, so
 * one request's bad data fails that request only. A request alone is a batch of one: each user writes its statement
 * once.
 */
import { Deferred, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { HoldsDatabaseSession } from "./SessionHolder.ts"

export interface CoalescedStatement<A, B, E, R> {
  /** The statement's name in traces ("BankStore.find"): each batch is a span `<name>.batch` with its size. */
  readonly name: string
  /** The statement: one result per request, in the requests' order. */
  readonly batch: (requests: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E, R>
  /** At most this many requests a batch (so a statement's parameters stay bounded). */
  readonly maxBatch: number
}

interface Waiting<A, B, E> {
  readonly request: A
  readonly done: Deferred.Deferred<B, E>
}

/**
 * Answers the function a caller calls with its request. The batches run in the scope of the layer that makes the
 * coalescer: a caller that goes away does not stop the requests batched with its own (nor its own, once queued).
 */
export const makeCoalesced = Effect.fnUntraced(function*<A, B, E, R>(statement: CoalescedStatement<A, B, E, R>) {
  const scope = yield* Effect.scope
  const sql = yield* SqlClient.SqlClient
  const queue: Array<Waiting<A, B, E>> = []
  let draining = false
  /** The batch the drain has taken and not answered yet (at most one: one drain at a time). */
  let running: ReadonlyArray<Waiting<A, B, E>> = []

  const alone = (request: A) => Effect.map(statement.batch([request]), (results) => results[0]!)

  const runOne = (waiting: Waiting<A, B, E>) =>
    Effect.exit(alone(waiting.request)).pipe(Effect.flatMap((exit) => Deferred.done(waiting.done, exit)))

  /**
   * The next batch: once the drain holds a connection (on the embedded tier, the session, after everything queued
   * for it), whatever waits by then, its statement run on that connection.
   */
  const nextBatch = Effect.scoped(Effect.gen(function*() {
    const connection = yield* sql.reserve
    running = queue.splice(0, statement.maxBatch)
    return yield* statement.batch(running.map((waiting) => waiting.request)).pipe(
      Effect.withSpan(`${statement.name}.batch`, { attributes: { "engram.batch.size": running.length } }),
      Effect.provideService(sql.transactionService, [connection, 0]),
      Effect.provideService(HoldsDatabaseSession, true)
    )
  }))

  /** Runs the queue out, batch by batch; interrupted (the service stops), it answers what it held with that. */
  const drain = Effect.gen(function*() {
    while (queue.length > 0) {
      const exit = yield* Effect.exit(nextBatch)
      if (Exit.isSuccess(exit)) {
        running.forEach((waiting, index) => Deferred.doneUnsafe(waiting.done, Exit.succeed(exit.value[index]!)))
      } else {
        // No connection (then nothing was taken yet), or the batch failed: each request's own statement answers it.
        if (running.length === 0) running = queue.splice(0, statement.maxBatch)
        yield* Effect.forEach(running, runOne, { discard: true })
      }
      running = []
    }
    draining = false
  }).pipe(
    Effect.onInterrupt(() =>
      Effect.sync(() => {
        for (const waiting of [...running, ...queue.splice(0)]) Deferred.doneUnsafe(waiting.done, Exit.interrupt())
        running = []
        draining = false
      })
    )
  )

  return (request: A): Effect.Effect<B, E, R> =>
    Effect.gen(function*() {
      if (yield* HoldsDatabaseSession) return yield* alone(request)
      const done = Deferred.makeUnsafe<B, E>()
      queue.push({ request, done })
      if (!draining) {
        draining = true
        yield* Effect.forkIn(drain, scope)
      }
      return yield* Deferred.await(done)
    })
})
