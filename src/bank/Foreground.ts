/**
 * Interactive work first: requests in flight are counted, and background work (operations, consolidation batches,
 * brain compactions) waits for a moment with none before each bounded slice — at most `backgroundMaxWait`, so it is
 * slowed under load, never starved. One PGlite session and one JavaScript thread serve both; a slice that starts
 * while requests wait holds them up for its whole length. Waiting is on a latch, never a poll.
 */
import { Context, Duration, Effect, Latch, Layer } from "effect"
import { EngramConfig } from "../config/EngramConfig.ts"

/** The longest pause `shareAfterSlice` makes (measured beside a repo read copy's slices of up to 0.5 s). */
const sliceGap = Duration.millis(250)

export class Foreground extends Context.Service<Foreground, {
  /** Runs an interactive request, counted as in flight for its whole length. */
  readonly request: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Before a slice of background work: returns when no request is in flight, or after the longest wait. */
  readonly yieldToRequests: Effect.Effect<void>
  /**
   * The same with a longer wait for the most deferrable work: returns when no request is in flight, or after
   * `atMost` (never sooner than the longest wait).
   */
  readonly yieldAtMost: (atMost: Duration.Duration) => Effect.Effect<void>
  readonly inFlight: Effect.Effect<number>
  /**
   * After a slice of a long job that a request waits for (a repo enable, fork or read copy, a large forget), which
   * held the database for `held`: with other requests in flight than the one driving the job, the session is left to
   * them for as long (at most `sliceGap`), since a request needs several statements one after another and with the
   * next slice queued at once it got one statement per slice; alone, the job goes on at once.
   */
  readonly shareAfterSlice: (held: Duration.Duration) => Effect.Effect<void>
}>()("engram/bank/Foreground") {
  static readonly layerWith = (maxWait: Duration.Input) =>
    Layer.sync(Foreground, () => {
      let inFlight = 0
      const quiet = Latch.makeUnsafe(true)
      const enter = Effect.sync(() => {
        if (inFlight++ === 0) Latch.closeUnsafe(quiet)
      })
      const leave = Effect.sync(() => {
        if (--inFlight === 0) Latch.openUnsafe(quiet)
      })
      const longestWait = Duration.fromInputUnsafe(maxWait)
      // A request that has arrived but is not read yet is not counted. Background work that runs statement after
      // statement on PGlite continues in microtasks and never lets the event loop poll its sockets, so without a
      // turn of the loop first, every check here saw no request while one waited, and a second of telemetry rows
      // (13 slices) ran before the next recall was even read. `yieldNow` resumes from `setImmediate`, after the poll.
      const yieldAtMost = (atMost: Duration.Duration) =>
        Effect.yieldNow.pipe(
          Effect.andThen(Latch.await(quiet)),
          Effect.timeoutOption(Duration.max(atMost, longestWait)),
          Effect.asVoid
        )
      return Foreground.of({
        request: (effect) => Effect.acquireUseRelease(enter, () => effect, () => leave),
        yieldToRequests: yieldAtMost(Duration.zero),
        yieldAtMost,
        inFlight: Effect.sync(() => inFlight),
        shareAfterSlice: (held) =>
          Effect.suspend(() => inFlight > 1 ? Effect.sleep(Duration.min(held, sliceGap)) : Effect.yieldNow)
      })
    })

  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const config = yield* EngramConfig
    return Foreground.layerWith(config.backgroundMaxWait)
  }))
}
