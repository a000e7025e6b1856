/**
 * After facts were edited in place (new tags, new text, restored from the archive): the observations resting on
 * them go, and they and their co-sources wait for consolidation again, so observations are rebuilt from what the
 * facts say now. Run inside the caller's transaction; true when a consolidation run was queued (then `wake`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { releaseObservationsOf } from "./ObservationResets.ts"
import { consolidateTask, type makeConsolidationRequests } from "./ConsolidationRequests.ts"

export const requeueEditedFacts = Effect.fn("FactRequeue.requeueEditedFacts")(function*(
  consolidation: Effect.Success<typeof makeConsolidationRequests>,
  bankId: string,
  factIds: ReadonlyArray<string>,
  observationsOn: boolean
) {
  if (factIds.length === 0) return false
  const sql = yield* SqlClient.SqlClient
  yield* releaseObservationsOf(bankId, factIds)
  yield* sql`UPDATE memory_units SET consolidated_at = NULL
    WHERE bank_id = ${bankId} AND id IN ${sql.in([...factIds])} AND fact_type IN ('world', 'experience')`
  if (!observationsOn) return false
  yield* consolidation.enqueue(bankId, consolidateTask, "retain")
  return true
})
