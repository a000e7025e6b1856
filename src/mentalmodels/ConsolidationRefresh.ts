/**
 * Keeps `refresh_after_consolidation` models current: when a consolidation run completes and changed
 * observations, each such model of the bank gets a refresh operation (in its own trigger mode). A run that
 * reports it changed nothing queues nothing. Events arrive at least once; a model that already has a refresh
 * waiting is not queued again, so a repeated event or a burst of runs costs one refresh.
 */
import { Effect } from "effect"
import { BankEvents } from "../events/BankEvents.ts"
import { MentalModels } from "./MentalModels.ts"

/** The counts consolidation reports in its event (see memory/consolidation/Consolidation.ts). */
const countKeys = [
  "observations_created",
  "observations_updated",
  "observations_merged",
  "observations_removed"
] as const

/** How many observations the run says it changed; undefined when the event carries no such count. */
export const changedObservations = (data: Record<string, unknown>): number | undefined => {
  const counts = countKeys.map((key) => data[key]).filter((value): value is number => typeof value === "number")
  return counts.length === 0 ? undefined : counts.reduce((sum, value) => sum + value, 0)
}

export const ConsolidationRefresh = BankEvents.listener(Effect.gen(function*() {
  const models = yield* MentalModels
  return (event) => {
    if (event.type !== "consolidation.completed" || changedObservations(event.data) === 0) return Effect.void
    return models.refreshAfterConsolidation(event.bankId).pipe(
      Effect.tap((queued) =>
        queued.length === 0
          ? Effect.void
          : Effect.logDebug(`queued ${queued.length} mental model refreshes after consolidation`)
      ),
      // A listener never fails the consolidation that emitted the event.
      Effect.catchCause((cause) =>
        Effect.logWarning("queueing mental model refreshes after consolidation failed", cause)
      ),
      Effect.asVoid
    )
  }
}))
