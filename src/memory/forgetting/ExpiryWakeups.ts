/**
 * The wake-up channel of the expiry scheduler: a write that gives a memory an expiry (retain, a memory update) tells
 * it, and the scheduler, otherwise asleep until the earliest known expiry, looks again. Holds no state that matters:
 * `memory_units.expires_at` does.
 */
import { Context, Effect, Layer, Queue } from "effect"

export class ExpiryWakeups extends Context.Service<ExpiryWakeups, {
  readonly notify: Effect.Effect<void>
  /** Waits for a notification or `timeoutMillis` (null: no timeout). */
  readonly next: (timeoutMillis: number | null) => Effect.Effect<void>
}>()("engram/memory/forgetting/ExpiryWakeups") {
  static readonly layer = Layer.effect(
    ExpiryWakeups,
    Effect.gen(function*() {
      const queue = yield* Queue.sliding<void>(1)
      const take = Effect.andThen(Queue.take(queue), Queue.clear(queue))
      return ExpiryWakeups.of({
        notify: Effect.asVoid(Queue.offer(queue, undefined)),
        next: (timeoutMillis) =>
          timeoutMillis === null ? Effect.asVoid(take) : Effect.asVoid(Effect.timeoutOption(take, timeoutMillis))
      })
    })
  )
}
