/**
 * Task types that exist only in tests, registered through the same `TaskRegistry` the features use, so the
 * generic operations engine can be exercised directly: echo, fail, flaky, block-until-released, switchable.
 */
import { Deferred, Effect, Layer } from "effect"
import { TaskFailure, TaskRegistry } from "../../src/bank/TaskRegistry.ts"

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

// The polling helper lives in `Eventually.ts`; re-exported here because some 40 test files import it from here.
export { eventually, eventuallyAsync, type PollOptions } from "./Eventually.ts"
