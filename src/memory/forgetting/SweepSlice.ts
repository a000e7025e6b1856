/**
 * One slice of a sweep, expiry's or retention's, or of a large forget: the memories `pick` chooses (read inside the
 * bank's write lock, so a retain between slices is seen) deleted with everything derived from them (forget's own
 * path, `deleteEverythingDerived`) and audited with a count only, in one transaction: a large forget's slices are
 * audited too (its request's own entry is written when it answers), so a crash between slices leaves a record of
 * what they deleted. The bank's reads' access events still buffered are written first, as forget does, so the slice
 * deletes those of the memories it sweeps and none is written afterwards naming a swept memory; only the bank's own:
 * another bank's backlog of reads is not the slice's to write (under steady recall of that bank it was up to 50,000
 * rows, about 17 s, before every slice). The trajectories the slice drops (their path ran through a swept memory)
 * get their recompute queued in the same transaction, so a crash between slices loses none; the sweep runs on the
 * bank's worker, so the recompute waits until it is done and every later slice adds its entities to that one waiting
 * operation (`EntityRequests.queueTrajectories`) rather than queueing its own.
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AccessTelemetry } from "../../activity/AccessTelemetry.ts"
import { AuditLogs } from "../../audit/AuditLogs.ts"
import { BankLocks } from "../../bank/BankLocks.ts"
import { makeEntityRequests } from "../../entities/EntityRequests.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { deleteEverythingDerived, sweptOnly } from "./DerivedDeletion.ts"

export const makeSweepSlice = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const locks = yield* BankLocks
  const audit = yield* AuditLogs
  const consolidation = yield* makeConsolidationRequests
  const telemetry = yield* AccessTelemetry
  const requests = yield* makeEntityRequests

  return (bankId: string, slice: {
    /** The audit entry's action, e.g. `memories.expiry_sweep`; also why the trajectories it drops are recomputed. */
    readonly action: string
    /** The audit entry's action when it is not `action` (a forget's slices: `memories.forget_slice`). */
    readonly auditAction?: string
    /** The audit entry's route, from how many memories went (never what they said); without it, no entry. */
    readonly describe?: (deleted: number) => string
    /** The ids to delete, chosen at the slice's start time. */
    readonly pick: (startedAt: Date) => Effect.Effect<ReadonlyArray<string>, unknown, SqlClient.SqlClient>
  }) =>
    telemetry.writeBufferedOf(bankId).pipe(Effect.andThen(
      locks.withWriteLock(bankId)(
        Effect.gen(function*() {
          const startedAt = new Date(yield* Clock.currentTimeMillis)
          const ids = yield* slice.pick(startedAt)
          const derived = yield* deleteEverythingDerived(consolidation, bankId, sweptOnly(ids))
          const deleted = derived.deletion.memories.length
          if (deleted > 0 && slice.describe !== undefined) {
            yield* audit.record({
              bankId,
              action: slice.auditAction ?? slice.action,
              transport: "system",
              method: "SWEEP",
              route: slice.describe(deleted),
              status: 200,
              actor: "system",
              startedAt,
              endedAt: new Date(yield* Clock.currentTimeMillis)
            })
          }
          const trajectoriesQueued = yield* requests.queueTrajectories(
            bankId,
            derived.trajectoryEntityIds,
            slice.action
          )
          return { picked: ids.length, derived, trajectoriesQueued }
        }).pipe(sql.withTransaction, Effect.orDie, Effect.provideService(SqlClient.SqlClient, sql))
      )
    ))
})
