/**
 * The seam between features that make things happen (retain, consolidation, operations) and features that
 * react to them (webhooks, mental model refresh). Producers `emit`; listeners registered at layer build time
 * run in order. `emit` is called by a task before it completes, so a crash re-runs the task and re-emits:
 * delivery is at-least-once and listeners must tolerate a repeated event (same `eventId` only when the
 * producer passes one).
 */
import { Context, Effect, Layer } from "effect"
import type { Bank } from "../domain/Bank.ts"

/** The event types engram emits; webhooks may subscribe to any of them. */
export const eventTypes = ["retain.completed", "consolidation.completed", "operation.failed"] as const
export type EventType = typeof eventTypes[number]

export interface BankEvent {
  readonly eventId: string
  readonly type: EventType
  readonly bankId: string
  /** ISO-8601 time the event happened. */
  readonly occurredAt: string
  readonly data: Record<string, unknown>
  /**
   * The bank as the producer read it, when it had it at hand: listeners that only need its settings use it instead
   * of reading the bank again on every event. In-process only; never part of a webhook's body.
   */
  readonly bank?: Bank
}

/** A listener never fails the producer: its own errors are its to log and retry. */
export type BankEventListener = (event: BankEvent) => Effect.Effect<void>

export class BankEvents extends Context.Service<BankEvents, {
  readonly emit: (
    bankId: string,
    type: EventType,
    data: Record<string, unknown>,
    eventId?: string,
    bank?: Bank
  ) => Effect.Effect<void>
  readonly listen: (listener: BankEventListener) => Effect.Effect<void>
}>()("engram/events/BankEvents") {
  static readonly layer = Layer.sync(BankEvents, () => {
    const listeners: Array<BankEventListener> = []
    return BankEvents.of({
      emit: (bankId, type, data, eventId, bank) =>
        Effect.suspend(() => {
          const event: BankEvent = {
            eventId: eventId ?? crypto.randomUUID(),
            type,
            bankId,
            occurredAt: new Date().toISOString(),
            data,
            ...(bank === undefined ? {} : { bank })
          }
          return Effect.forEach(listeners, (listener) => listener(event), { discard: true })
        }),
      listen: (listener) => Effect.sync(() => void listeners.push(listener))
    })
  })

  /** A layer that registers one listener built from the services it needs. */
  static readonly listener = <E, R>(make: Effect.Effect<BankEventListener, E, R>) =>
    Layer.effectDiscard(
      Effect.gen(function*() {
        const events = yield* BankEvents
        yield* events.listen(yield* make)
      })
    )
}
