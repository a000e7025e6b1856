/**
 * Task types that exist only in tests, registered through the same `TaskRegistry` the features use, so the
 * generic operations engine can be exercised directly: echo, fail, flaky, block-until-released, switchable.
 */
import { Deferred, Duration, Effect, Layer } from "effect"
import { TaskFailure, TaskRegistry } from "../../src/operations/TaskRegistry.ts"

export const TestTasks = {
  blockers: new Map<string, Deferred.Deferred<void>>(),
  interrupted: new Set<string>(),
  attempts: new Map<string, number>(),
  failing: { value: false }
}

const key = (payload: unknown) => String((payload as { key?: string }).key ?? "")

export const TestTaskHandlers = Layer.mergeAll(
  TaskRegistry.handler("test_echo", Effect.succeed((operation) => Effect.succeed({ echoed: operation.payload }))),
  TaskRegistry.handler(
    "test_fail",
    Effect.succeed(() => Effect.fail(new TaskFailure({ message: "the test task failed on purpose", retryable: false })))
  ),
  TaskRegistry.handler(
    "test_flaky",
    Effect.succeed((operation) =>
      Effect.suspend(() => {
        const name = key(operation.payload)
        const attempt = (TestTasks.attempts.get(name) ?? 0) + 1
        TestTasks.attempts.set(name, attempt)
        return attempt < 3
          ? Effect.fail(new TaskFailure({ message: `transient failure ${attempt}`, retryable: true }))
          : Effect.succeed({ attempts: attempt })
      })
    )
  ),
  TaskRegistry.handler(
    "test_block",
    Effect.succeed((operation) =>
      Effect.gen(function*() {
        const name = key(operation.payload)
        const gate = TestTasks.blockers.get(name) ?? (yield* Deferred.make<void>())
        TestTasks.blockers.set(name, gate)
        yield* Deferred.await(gate).pipe(Effect.onInterrupt(() => Effect.sync(() => TestTasks.interrupted.add(name))))
        return { released: name }
      })
    )
  ),
  TaskRegistry.handler(
    "test_switch",
    Effect.succeed(() =>
      Effect.suspend(() =>
        TestTasks.failing.value
          ? Effect.fail(new TaskFailure({ message: "dependency down", retryable: false }))
          : Effect.succeed({ ok: true })
      )
    )
  )
)

export interface PollOptions {
  /** What is awaited, for the failure's message. */
  readonly what?: string
  readonly interval?: Duration.Input
  /** More to say when the wait fails (a child process's last output). */
  readonly context?: () => string
}

/**
 * Polls until `check` holds, within `timeout`: background work has no completion signal a client could wait on. The
 * one polling helper of the tests; a wait that never holds fails naming what was awaited and the last value read.
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
    while (true) {
      const value = yield* probe
      if (check(value)) return value
      if (Date.now() > deadline) {
        const context = options.context === undefined ? "" : `\n${options.context()}`
        return yield* Effect.die(
          new Error(`${options.what ?? "condition"} not reached within ${Duration.format(Duration.fromInputUnsafe(timeout))}: ${JSON.stringify(value)}${context}`)
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
