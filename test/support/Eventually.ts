/**
 * The one polling helper of the tests. Background work (an operation, consolidation, a child process starting)
 * has no completion signal a client could wait on, so a test reads until what it waits for holds, within a
 * deadline: a wait that never holds fails naming what was awaited and the last value read, instead of hanging or
 * carrying on as if it had held.
 */
import { Duration, Effect, Option } from "effect"

export interface PollOptions {
  /** What is awaited, for the failure's message. */
  readonly what?: string
  readonly interval?: Duration.Input
  /** More to say when the wait fails (a child process's last output). */
  readonly context?: () => string
}

/**
 * Polls `probe` until `check` holds, within `timeout` (15 s unless told), and returns the value that held. A read that
 * does not answer by the deadline fails the wait too (a request a server never answers would otherwise hold the test
 * until its own timeout, with nothing said of what it waited for).
 */
export const eventually = <A, E, R>(
  probe: Effect.Effect<A, E, R>,
  check: (value: A) => boolean,
  timeout: Duration.Input = Duration.seconds(15),
  options: PollOptions = {}
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.fromInputUnsafe(timeout))
    const interval = options.interval ?? Duration.millis(25)
    const fail = (last: string) => {
      const context = options.context === undefined ? "" : `\n${options.context()}`
      return Effect.die(
        new Error(
          `${options.what ?? "condition"} not reached within ${
            Duration.format(Duration.fromInputUnsafe(timeout))
          }: ${last}${context}`
        )
      )
    }
    while (true) {
      const read = yield* Effect.timeoutOption(probe, Duration.millis(Math.max(1, deadline - Date.now()) + 1_000))
      if (Option.isNone(read)) return yield* fail("the last read did not answer")
      const value = read.value
      if (check(value)) return value
      if (Date.now() > deadline) return yield* fail(JSON.stringify(value))
      yield* Effect.sleep(interval)
    }
  })

/** `eventually` over a promise-returning probe (a fetch against a child process). */
export const eventuallyAsync = <A>(
  probe: () => Promise<A>,
  check: (value: A) => boolean,
  timeout: Duration.Input,
  options: PollOptions = {}
) => eventually(Effect.promise(probe), check, timeout, options)
