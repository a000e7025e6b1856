/**
 * The `dream_prediction_check` task: every open prediction of the bank whose expiry window has passed is checked
 * against the memories retained between its run and its expiry. Memories that mention its subject support it
 * (`confirmed`), unless one of them is part of an open contradiction (`contradicted`); none at all leaves it
 * `expired`. The outcome is recorded by `system` with the evidence ids. Memories written by approving a dream's
 * own proposals (tagged `dream_run:…`) never count: a dream must not confirm itself.
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TaskRegistry } from "../bank/TaskRegistry.ts"
import { predictionCheckTask } from "./DreamQueue.ts"
import { DreamStore } from "./DreamStore.ts"
import { DreamWakeups } from "./DreamWakeups.ts"

const evidenceShown = 10

export const PredictionCheckTask = TaskRegistry.handler(
  predictionCheckTask,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* DreamStore
    const wakeups = yield* DreamWakeups

    return (operation) =>
      Effect.gen(function*() {
        const bankId = operation.bankId
        const now = new Date(yield* Clock.currentTimeMillis)
        const due = yield* store.duePredictions(bankId, now)
        const counts = { checked: 0, confirmed: 0, contradicted: 0, expired: 0 }
        for (const prediction of due) {
          const terms = (prediction["checkTerms"] as ReadonlyArray<string>).filter((term) => term.trim() !== "")
          const since = prediction["createdAt"] as Date
          const until = prediction["expiresAt"] as Date
          const matches = terms.length === 0 ? [] : yield* sql<{ id: string }>`
          SELECT u.id FROM memory_units u
          WHERE u.bank_id = ${bankId} AND u.created_at > ${since} AND u.created_at <= ${until}
            AND u.fact_type IN ('world', 'experience', 'observation')
            AND NOT EXISTS (SELECT 1 FROM unnest(u.tags) AS t(tag) WHERE t.tag LIKE 'dream_run:%')
            AND (SELECT bool_and(strpos(lower(u.text), w.term) > 0) FROM unnest(${[...terms]}::text[]) AS w(term))
          ORDER BY u.created_at LIMIT ${evidenceShown}`.pipe(Effect.orDie)
          const ids = matches.map((row) => row.id)
          const disputed = ids.length === 0 ? [] : yield* sql<{ id: string }>`
          SELECT id FROM anomaly_events WHERE bank_id = ${bankId} AND anomaly_type = 'contradiction'
            AND status = 'open' AND unit_ids && ${ids}::text[] LIMIT 1`.pipe(Effect.orDie)
          const status = ids.length === 0 ? "expired" : disputed.length > 0 ? "contradicted" : "confirmed"
          const note = status === "expired"
            ? `No memory about ${
              terms.join(", ") || "its subject"
            } was retained within the window; checked automatically.`
            : status === "contradicted"
            ? `${ids.length} memories retained since the run mention it, but they are part of an open contradiction.`
            : `Supported by ${ids.length} memories retained since the run; checked automatically.`
          const recorded = yield* store.recordOutcome({
            bankId,
            predictionId: String(prediction["id"]),
            predictionStatus: status,
            outcomeStatus: status,
            note,
            evidenceIds: ids,
            recordedBy: "system",
            onlyOpen: true,
            at: now
          })
          if (recorded._tag === "Some") {
            counts.checked++
            counts[status]++
          }
        }
        // More may be due (the check takes a bounded batch) or the next expiry is now the earliest: re-read.
        yield* wakeups.notify(bankId)
        return counts
      })
  })
)
