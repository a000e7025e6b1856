/**
 * Access telemetry: which memories, chunks and mental models each recall, reflect and mental-model read returned,
 * with their rerank scores and the time. `record` only appends to a bounded buffer in memory — it runs no SQL, so
 * a read never waits on telemetry. A background fiber writes the buffer in slices: it sleeps on a queue while the
 * buffer is empty (an idle server spends no CPU on it), waits a short delay once something arrives so one write
 * carries many reads, then writes a hundred rows at a time, letting requests in flight go first before each
 * slice. On one PGlite session a request waits for whatever statement is running, so the slice size bounds that
 * wait (a whole second of steady recalls written at once held the next recall up by 150–350 ms). When requests
 * never pause, a round writes everything due at once. What is buffered is written at shutdown too. Telemetry is best effort: a failed write is logged and counted, never surfaced to a
 * reader.
 */
import { Clock, Context, Duration, Effect, Layer, Queue, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { Foreground } from "../bank/Foreground.ts"
import { AccessBuffer } from "./AccessBuffer.ts"

export type AccessSource = "recall" | "reflect" | "mental_model"
export type AccessedType = "memory" | "chunk" | "mental_model"

export interface AccessedItem {
  readonly type: AccessedType
  readonly id: string
  /** The rerank score the item had in this read; null when the read does not score (a mental-model read). */
  readonly score: number | null
}

/**
 * Which kind of read the accesses belong to. A reflect searches through recall: it provides `reflect` here, so
 * the memories its searches return are recorded as the reflect's accesses, not as separate recalls.
 */
export const CurrentAccessSource = Context.Reference<AccessSource>("engram/activity/CurrentAccessSource", {
  defaultValue: () => "recall"
})

/**
 * A buffered row's place in recording order. A symbol key, because `JSON.stringify` leaves those out by itself: the
 * replacer function that dropped a string key took it off its fast path (500 rows in 312 µs against 144, a throwaway
 * micro-benchmark), and a write serialises every batch it takes.
 */
const recordedAt: unique symbol = Symbol("recordedAt")

interface BufferedAccess {
  /** The order it was recorded in (the buffer stays in this order): not written. */
  readonly [recordedAt]: number
  readonly bank_id: string
  readonly access_id: string
  readonly source: AccessSource
  readonly item_type: AccessedType
  readonly item_id: string
  readonly score: number | null
  readonly accessed_at: string
}

export interface AccessTelemetryOptions {
  /** How long the writer waits after the first buffered access, so one write carries many reads. Default 1 second. */
  readonly flushDelay?: Duration.Input
  /** Rows held in memory at most; accesses beyond it are dropped (and counted) until the next write. Default 50,000. */
  readonly maxBuffered?: number
  /** Accesses older than this are deleted (at most once an hour, by a write). Default 90 days, influence's widest window. */
  readonly retention?: Duration.Input
}

const pruneEvery = 3_600_000

/** Rows per background slice: one transaction of two statements, about 5 ms on PGlite. */
const rowsPerSlice = 100

/**
 * Rows per transaction when a write cannot wait for a lull: about 50 ms on PGlite. Its one session runs nothing else
 * meanwhile, so 2,000 (about 200 ms, a second of one client's recalls) held every other statement that long, once a
 * second: a repo status of a few statements waited for one each. The batch travels as one JSON parameter.
 */
const rowsPerStatement = 500

export class AccessTelemetry extends Context.Service<AccessTelemetry, {
  /** Buffers the items one read returned, as one access. No SQL; never fails. */
  readonly record: (bankId: string, items: ReadonlyArray<AccessedItem>, source?: AccessSource) => Effect.Effect<void>
  /** Writes what is buffered now (readers of the telemetry call it first, so they see the reads just made). */
  readonly flush: Effect.Effect<void>
  /** Writes what is buffered now, without pruning old events: for a reader that must count every recorded read. */
  readonly writeBuffered: Effect.Effect<void>
  /**
   * Writes what is buffered for one bank, and nothing of the others': for a reader of that bank's telemetry, and for
   * a deletion that must take the accesses of what it deletes. It costs what that bank's reads recorded, so a bank
   * read without pause by many clients does not hold up another bank's sweep or forget (it did, by up to 17 s a
   * slice: the whole buffer, up to `maxBuffered` rows, went first).
   */
  readonly writeBufferedOf: (bankId: string) => Effect.Effect<void>
  readonly stats: Effect.Effect<{ readonly buffered: number; readonly written: number; readonly dropped: number }>
}>()("engram/activity/AccessTelemetry") {
  static readonly layerWith = (options: AccessTelemetryOptions) =>
    Layer.effect(
      AccessTelemetry,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const foreground = yield* Foreground
        const flushDelay = Duration.fromInputUnsafe(options.flushDelay ?? Duration.seconds(1))
        const maxBuffered = options.maxBuffered ?? 50_000
        const buffer = new AccessBuffer<BufferedAccess>((row) => row[recordedAt])
        let recorded = 0
        let written = 0
        let dropped = 0
        const retentionMs = Duration.toMillis(Duration.fromInputUnsafe(options.retention ?? Duration.days(90)))
        let prunedAt = 0
        const wakeups = yield* Queue.sliding<void>(1)
        // One write at a time: a reader's flush waits for a write in progress, so it then sees those rows too.
        const writing = Semaphore.makeUnsafe(1)

        /**
         * One statement for both tables: the events and the memories' counters (shown by the graph views) follow the
         * same accesses and commit together. One statement rather than a transaction of two: on the embedded tier each
         * statement, and a transaction's `BEGIN` and `COMMIT`, is a turn at the one session that retains wait for.
         * Accesses of a bank deleted since the read are left out; so are memories deleted since it.
         */
        const write = (rows: ReadonlyArray<BufferedAccess>) =>
          sql`
            WITH batch AS MATERIALIZED (
              SELECT v.bank_id, v.access_id, v.source, v.item_type, v.item_id, v.score, v.accessed_at
              FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS v(bank_id text, access_id text, source text,
                item_type text, item_id text, score real, accessed_at timestamptz)
              WHERE EXISTS (SELECT 1 FROM banks b WHERE b.bank_id = v.bank_id)),
            events AS (
              INSERT INTO memory_access_events (bank_id, access_id, source, item_type, item_id, score, accessed_at)
              SELECT bank_id, access_id, source, item_type, item_id, score, accessed_at FROM batch)
            INSERT INTO memory_access_counts (unit_id, bank_id, access_count)
            SELECT u.id, u.bank_id, c.n
            FROM (SELECT bank_id, item_id, count(*)::int AS n FROM batch WHERE item_type = 'memory'
                  GROUP BY bank_id, item_id) c
            JOIN memory_units u ON u.id = c.item_id AND u.bank_id = c.bank_id
            ON CONFLICT (unit_id) DO UPDATE SET access_count = memory_access_counts.access_count + EXCLUDED.access_count`

        /** Telemetry is kept for the widest window anything reads; older rows go, so the table stays bounded. */
        const prune = Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          if (now - prunedAt < pruneEvery) return
          prunedAt = now
          yield* sql`DELETE FROM memory_access_events WHERE accessed_at < ${new Date(now - retentionMs)}`.pipe(
            Effect.catchCause((cause) => Effect.logWarning("could not prune old access telemetry", cause))
          )
        })

        const writeCounted = (rows: ReadonlyArray<BufferedAccess>) =>
          write(rows).pipe(
            Effect.tap(() => Effect.sync(() => void (written += rows.length))),
            Effect.catchCause((cause) =>
              Effect.sync(() => void (dropped += rows.length)).pipe(
                Effect.andThen(Effect.logWarning("could not write access telemetry; the batch is dropped", cause))
              )
            )
          )

        /**
         * Takes rows out of the buffer and writes them, holding the one permit for one statement's worth only, so a
         * bank's own flush waits for at most one statement of another's, never for a whole backlog.
         */
        const writeTaken = (take: () => ReadonlyArray<BufferedAccess>) =>
          Effect.uninterruptible(writing.withPermit(Effect.suspend(() => {
            const taken = take()
            return taken.length === 0 ? Effect.succeed(false) : Effect.as(writeCounted(taken), true)
          })))

        /**
         * The oldest `limit` rows (at most a statement's) recorded up to `upTo`, of one bank or of every bank, taken
         * out of the buffer (which stays in recording order).
         */
        const takeOldest = (limit: number, upTo: number, bankId: string | undefined) => () => {
          const most = Math.min(limit, rowsPerStatement)
          return bankId === undefined ? buffer.takeOldest(most, upTo) : buffer.takeOldestOf(bankId, most, upTo)
        }

        /** Writes the oldest `limit` rows recorded so far, of one bank or of all (a read recorded meanwhile waits). */
        const writeOldest = (limit: number, bankId?: string) =>
          Effect.gen(function*() {
            const upTo = recorded
            let left = limit
            while (left > 0 && (yield* writeTaken(takeOldest(left, upTo, bankId)))) left -= rowsPerStatement
          })

        /** Everything buffered, at once: a reader of the telemetry is itself a request, so it must not wait for a lull. */
        const writeBuffered = writeOldest(Number.POSITIVE_INFINITY)
        const flush = Effect.andThen(writeBuffered, prune)
        const writeBufferedOf = (bankId: string) => writeOldest(Number.POSITIVE_INFINITY, bankId)

        /**
         * The background writer's way: what was buffered when it woke, one slice at a time, each after requests in
         * flight have gone. Reads recorded meanwhile wait for the next round, so steady reads still make a few large
         * writes a second rather than one small write per read. When the longest wait runs out with requests still
         * in flight there is no lull to protect: everything due goes at once, or under sustained load (one slice per
         * longest wait) the writes would fall behind the reads that make them and the buffer would overflow.
         */
        const writeInSlices = Effect.gen(function*() {
          let due = buffer.size
          while (due > 0 && buffer.size > 0) {
            yield* foreground.yieldToRequests
            const limit = (yield* foreground.inFlight) === 0 ? rowsPerSlice : due
            yield* writeOldest(limit)
            due -= limit
          }
          yield* prune
          if (buffer.size > 0) Queue.offerUnsafe(wakeups, undefined)
        })

        const record = (bankId: string, items: ReadonlyArray<AccessedItem>, source?: AccessSource) =>
          items.length === 0 ? Effect.void : Effect.gen(function*() {
            const from = source ?? (yield* CurrentAccessSource)
            const at = new Date(yield* Clock.currentTimeMillis).toISOString()
            const accessId = crypto.randomUUID()
            const wasEmpty = buffer.size === 0
            for (const item of items) {
              if (buffer.size >= maxBuffered) {
                dropped++
                continue
              }
              buffer.push({
                [recordedAt]: ++recorded,
                bank_id: bankId,
                access_id: accessId,
                source: from,
                item_type: item.type,
                item_id: item.id,
                score: item.score === null || !Number.isFinite(item.score) ? null : item.score,
                accessed_at: at
              })
            }
            if (wasEmpty) Queue.offerUnsafe(wakeups, undefined)
          })

        // The writer: blocked on the queue while nothing is buffered; its timer runs only when there is work.
        yield* Effect.forever(Effect.gen(function*() {
          yield* Queue.take(wakeups)
          yield* Effect.sleep(flushDelay)
          yield* writeInSlices
        })).pipe(Effect.withTracerEnabled(false), Effect.forkScoped)
        // Added after the writer, so it runs before the writer is interrupted: nothing buffered is lost at shutdown.
        yield* Effect.addFinalizer(() => flush)

        return AccessTelemetry.of({
          record,
          flush,
          writeBuffered,
          writeBufferedOf,
          stats: Effect.sync(() => ({ buffered: buffer.size, written, dropped }))
        })
      })
    )

  static readonly layer = AccessTelemetry.layerWith({})
}
