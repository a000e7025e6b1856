/**
 * Group commit for retains. Agents retain a turn at a time, many at once; each such retain wrote its one item in a
 * transaction of its own, one after another under the bank's write lock, paying a whole batch's statements (about 13)
 * for one memory — 5 to 10 times the cost per item of a batch of 100. Retains that arrive while the bank's writer is
 * busy now wait in the bank's queue, and the writer takes everything waiting as one batch: one transaction, one
 * statement per table, as if one request had carried all the items. Each request still gets its own result (its
 * memories by id, its duplicates).
 *
 * Only plain items are grouped: no document (two requests naming one document would write its row twice in one
 * statement, and a replacement removes old memories). Queued retains are grouped too: a bank's actor runs the retain
 * operations queued one behind another together (`RunsTogether`), and each memory keeps its own operation's id. If a
 * group's transaction fails, each request of it is written again alone, so one request's bad data fails that request
 * only. The writer runs in the service's scope: a client that goes away does not stop the retains grouped with its
 * own.
 */
import { Cause, Deferred, Effect, Exit } from "effect"
import type { WriteBatch, WriteResult } from "./MemoryWriter.ts"

/** A group holds at most this many facts (a request's own batch can be larger; it is then written alone). */
export const groupFacts = 500

/** A retain's batch, and whether its facts are to be consolidated into observations (the bank's setting it read). */
export interface RetainWrite {
  readonly batch: WriteBatch
  readonly consolidates: boolean
}

interface Waiting {
  readonly write: RetainWrite
  readonly done: Deferred.Deferred<WriteResult>
}

/** The facts of many batches of one bank as one batch; each fact and chunk keeps its own batch's operation. */
const merged = (writes: ReadonlyArray<RetainWrite>): RetainWrite => ({
  batch: {
    ...writes[0]!.batch,
    operationId: null,
    documents: [],
    chunks: writes.flatMap((write) =>
      write.batch.chunks.map((chunk) => ({ ...chunk, operationId: write.batch.operationId }))
    ),
    facts: writes.flatMap((write) =>
      write.batch.facts.map((fact) => ({ ...fact, operationId: write.batch.operationId }))
    )
  },
  consolidates: writes.some((write) => write.consolidates)
})

/** One request's share of a group's result: its created memories, and its facts not created as duplicates. */
const shareOf = (batch: WriteBatch, result: WriteResult): WriteResult => {
  const mine = new Set(batch.facts.map((fact) => fact.id))
  const created = result.created.filter((id) => mine.has(id))
  return { created, duplicates: batch.facts.length - created.length, causalLinks: 0 }
}

/** Whether a retain's batch may share a transaction with others. */
export const groupable = (batch: WriteBatch) => batch.documents.length === 0 && batch.facts.length <= groupFacts

/**
 * `write` is the whole transaction of one batch (write lock, statements, commit); the group committer calls it with
 * a merged batch of whatever waited. Answers the function a retain calls with its own batch.
 */
export const makeGroupCommit = Effect.fnUntraced(function*<R>(
  write: (write: RetainWrite) => Effect.Effect<WriteResult, never, R>
) {
  const scope = yield* Effect.scope
  const queues = new Map<string, Array<Waiting>>()

  /** The next group: the oldest waiting retains, up to `groupFacts` facts (always at least one retain). */
  const nextGroup = (queue: Array<Waiting>) => {
    let facts = 0
    let count = 0
    while (count < queue.length && (count === 0 || facts + queue[count]!.write.batch.facts.length <= groupFacts)) {
      facts += queue[count]!.write.batch.facts.length
      count++
    }
    return queue.splice(0, count)
  }

  const settle = (group: ReadonlyArray<Waiting>, result: WriteResult) =>
    Effect.forEach(group, (waiting) => Deferred.succeed(waiting.done, shareOf(waiting.write.batch, result)), {
      discard: true
    })

  /**
   * Writes the bank's queue out, group by group, until nothing waits; then the bank has no writer. Interrupted (the
   * service is stopping, its scope closes), it answers every retain it still held with an interruption: they wait
   * for it uninterruptibly, and a queued retain's operation then goes back to pending for the next start.
   */
  const drain = (bankId: string, queue: Array<Waiting>) => {
    let writing: ReadonlyArray<Waiting> = []
    return Effect.gen(function*() {
      while (queue.length > 0) {
        const group = nextGroup(queue)
        writing = group
        const exit = yield* Effect.exit(write(group.length === 1 ? group[0]!.write : merged(group.map((w) => w.write))))
        if (Exit.isSuccess(exit)) {
          yield* settle(group, exit.value)
          continue
        }
        if (group.length === 1) {
          yield* Deferred.failCause(group[0]!.done, exit.cause)
          continue
        }
        // One request's data may be what failed the group: each is written alone, and fails alone.
        yield* Effect.logWarning(
          "a grouped retain failed; its requests are written one by one",
          Cause.pretty(exit.cause)
        )
        for (const waiting of group) {
          const alone = yield* Effect.exit(write(waiting.write))
          yield* Exit.isSuccess(alone)
            ? Deferred.succeed(waiting.done, alone.value)
            : Deferred.failCause(waiting.done, alone.cause)
        }
      }
      queues.delete(bankId)
    }).pipe(
      Effect.onInterrupt(() =>
        Effect.forEach([...writing, ...queue.splice(0)], (waiting) => Deferred.interrupt(waiting.done), {
          discard: true
        }).pipe(Effect.andThen(Effect.sync(() => queues.get(bankId) === queue && queues.delete(bankId))))
      )
    )
  }

  return (retain: RetainWrite): Effect.Effect<WriteResult, never, R> =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<WriteResult>()
      const bankId = retain.batch.bankId
      const waiting = queues.get(bankId)
      if (waiting !== undefined) {
        waiting.push({ write: retain, done })
      } else {
        const queue: Array<Waiting> = [{ write: retain, done }]
        queues.set(bankId, queue)
        yield* Effect.forkIn(drain(bankId, queue), scope)
      }
      return yield* Deferred.await(done)
    })
})
