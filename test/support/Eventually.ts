/**
 * The one polling helper of the tests. Background work (an operation, consolidation, a child process starting)
 * has no completion signal a client could wait on, so a test reads until what it waits for holds, within a
 * deadline: a wait that never holds fails naming what was awaited and the last value read, instead of hanging or
 * carrying on as if it had held.
 */
import { Duration, Effect } from "effect"

export interface PollOptions {
  /** What is awaited, for the failure's message. */
  readonly what?: string
  readonly interval?: Duration.Input
  /** More to say when the wait fails (a child process's last output). */
  readonly context?: () => string
}

/** Polls `probe` until `check` holds, within `timeout` (15 s unless told), and returns the value that held. */
export const eventually = <A, E, R>(
  probe: Effect.Effect<A, E, R>,
  check: (value: A) => boolean,
  timeout: Duration.Input = Duration.seconds(15),
  options: PollOptions = {}
) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(Duration.fromInputUnsafe(timeout))
    const interval = options.interval ?? Duration.millis(25)
    while (true) {
      const value = yield* probe
      if (check(value)) return value
      if (Date.now() > deadline) {
        const context = options.context === undefined ? "" : `\n${options.context()}`
        return yield* Effect.die(
          new Error(
            `${options.what ?? "condition"} not reached within ${Duration.format(Duration.fromInputUnsafe(timeout))}: ${
              JSON.stringify(value)
            }${context}`
          )
        )
      }
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
