/**
 * The wake-up channel of the dream scheduler: whoever changes something the schedule depends on (a bank's dream
 * settings, a run that added predictions, a finished expiry check) names the bank here, and the scheduler, which
 * otherwise sleeps until its next due time, re-reads that bank. Holds no state that matters: the tables do.
 */
import { Context, Effect, Layer, Queue } from "effect"

export class DreamWakeups extends Context.Service<DreamWakeups, {
  readonly notify: (bankId: string) => Effect.Effect<void>
  /** Waits for the next notification, or `timeoutMillis` (null: no timeout); returns every bank named meanwhile. */
  readonly next: (timeoutMillis: number | null) => Effect.Effect<ReadonlyArray<string>>
}>()("engram/dreams/DreamWakeups") {
  static readonly layer = Layer.effect(
    DreamWakeups,
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<string>()
      const drain = (first: string) => Effect.map(Queue.clear(queue), (rest) => [first, ...rest])
      return DreamWakeups.of({
        notify: (bankId) => Effect.asVoid(Queue.offer(queue, bankId)),
        next: (timeoutMillis) =>
          timeoutMillis === null
            ? Effect.flatMap(Queue.take(queue), drain)
            : Queue.take(queue).pipe(
              Effect.timeoutOption(timeoutMillis),
              Effect.flatMap((taken) => (taken._tag === "Some" ? drain(taken.value) : Effect.succeed([])))
            )
      })
    })
  )
}
