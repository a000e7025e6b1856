/**
 * Deleting memories with what was derived from them, inside the caller's transaction (under the bank's write lock):
 * the memories and their links and entity mentions (cascade), entity counts recounted, entities no memory names any
 * longer, and the observations resting on them (their surviving facts queued for consolidation, so those observations
 * are rebuilt without the deleted content). The brain learns of every deleted memory from the change log, which a
 * trigger writes in the same transaction: after the commit the caller calls `GraphRecall.changed` and, when this says
 * so, wakes consolidation. One transaction, so a crash leaves each memory present with its derived state or gone
 * with it. Used by the expiry sweep and by forget; `MemoryUnits.remove` and `Documents.remove` do the same.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { consolidateTask, type makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { releaseObservationsOf } from "../consolidation/ObservationResets.ts"
import { deleteUnitsAndRecount } from "../retain/EntityMentions.ts"

export interface DerivedDeletion {
  /** Memories deleted (facts, observations, opinions: whatever the ids named). */
  readonly memories: ReadonlyArray<string>
  /** Observations that rested on a deleted fact: deleted, their other facts queued to rebuild them. */
  readonly observationsReleased: number
  /** Entities no memory names any more, deleted (their trajectories cascade). */
  readonly entitiesPruned: number
  /** A consolidation run was queued: wake the bank after the commit. */
  readonly consolidationQueued: boolean
}

type ConsolidationRequests = Effect.Success<typeof makeConsolidationRequests>

export const deleteWithDerived = Effect.fn("Forgetting.deleteWithDerived")(function*(
  consolidation: ConsolidationRequests,
  bankId: string,
  ids: ReadonlyArray<string>
) {
  const sql = yield* SqlClient.SqlClient
  if (ids.length === 0) {
    return { memories: [], observationsReleased: 0, entitiesPruned: 0, consolidationQueued: false } satisfies DerivedDeletion
  }
  const memories = yield* deleteUnitsAndRecount(bankId, sql`id IN ${sql.in([...ids])}`)
  const released = yield* releaseObservationsOf(bankId, memories)
  const pruned = yield* sql`DELETE FROM entities e WHERE e.bank_id = ${bankId}
    AND NOT EXISTS (SELECT 1 FROM unit_entities ue WHERE ue.entity_id = e.id) RETURNING e.id`
  if (released > 0) yield* consolidation.enqueue(bankId, consolidateTask, "delete")
  return {
    memories,
    observationsReleased: released,
    entitiesPruned: pruned.length,
    consolidationQueued: released > 0
  } satisfies DerivedDeletion
})
