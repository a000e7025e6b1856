/**
 * Forget: every memory about an entity, a set of memory ids, a document or a tag goes, with everything derived from
 * it — observations built on it (their surviving facts reconsolidated), invalidated copies in the archive, the entity
 * and its trajectory, the bank's entity map, mental models citing or naming it (emptied and queued for refresh), dream
 * runs, predictions and proposals resting on it, anomalies, access history, chunks and documents nothing else needs,
 * dataset sets that produced it — in ONE transaction under the bank's write lock: a crash leaves all of it or none.
 * A forget of more than `forgetTuning.sliceAbove` memories first deletes them in slices, each a transaction under the
 * write lock like a sweep's (each memory goes with its derived state, and the lock and the embedded database's one
 * session are free between slices), then forgets what is left as above; a crash between slices leaves each memory
 * whole or gone, and the same forget asked again finishes it. Dry runs and `purge_history` delete in one transaction.
 * The brain learns of it from the change log; its kept `.brain` file is written again. Memory repo commits are listed;
 * with `purge_history` they are rewritten without the content in the same transaction (`HistoryPurge`), from a plan of
 * the rewrite read before it in slices (`PurgePlan`: history's objects never change). A dry run
 * does the same work and rolls it back, so its report is exact. Nothing here logs or returns forgotten content: the
 * report holds counts and ids.
 */
import { Clock, Config, Context, Data, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { AuditLogs } from "../../audit/AuditLogs.ts"
import { BankActors } from "../../bank/BankActors.ts"
import { BankLocks } from "../../bank/BankLocks.ts"
import { Foreground } from "../../bank/Foreground.ts"
import { AccessTelemetry } from "../../activity/AccessTelemetry.ts"
import { Banks } from "../../bank/Banks.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import { makeEntityRequests } from "../../entities/EntityRequests.ts"
import type { ForgetReport, ForgetRequest } from "../../domain/Forget.ts"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { addRemoved, deleteEverythingDerived, likePattern, noneRemoved } from "./DerivedDeletion.ts"
import { purgeHistory } from "./HistoryPurge.ts"
import { planPurge, type PurgePlan, type PurgeSelection } from "./PurgePlan.ts"
import { makeKeptBrainFile } from "./KeptBrainFile.ts"
import { makeSweepSlice } from "./SweepSlice.ts"

interface Forgotten {
  readonly report: ForgetReport
  /** Mental models emptied: queued for refresh after the commit. */
  readonly models: ReadonlyArray<string>
  readonly wake: boolean
  /** A recompute of the trajectories the forget dropped was queued: wake the bank after the commit. */
  readonly trajectoriesQueued: boolean
}

/**
 * A forget selecting more memories than `sliceAbove` deletes them `sliceMemories` at a time first (the sweeps' slice
 * size: about 50 ms of PGlite each at 10k memories, see docs/forgetting.md).
 */
export const forgetTuning = { sliceAbove: 1_000, sliceMemories: 200 }

/** What the slices of a large forget removed (`SweepSlice`, the sweeps' slice), before its last transaction. */
interface Sliced {
  readonly memoryIds: ReadonlyArray<string>
  readonly removed: ForgetReport["removed"]
  readonly models: ReadonlyArray<string>
  readonly wake: boolean
  readonly trajectoriesQueued: boolean
  /** The oldest selected memory's creation, read before the first slice: repo commits since then may hold it. */
  readonly earliest: Date | null
}

const nothingSliced: Sliced = {
  memoryIds: [],
  removed: noneRemoved,
  models: [],
  wake: false,
  trajectoriesQueued: false,
  earliest: null
}

const earlier = (a: Date | null, b: Date | null) => a === null ? b : b === null || a <= b ? a : b

/** Carries a dry run's outcome out of its transaction, which it rolls back. */
class RolledBack extends Data.TaggedError("RolledBack")<{ readonly outcome: Forgotten }> {}

/** What a purge of history looks for: the selected memories, their chunks and documents, and the selectors. */
const purgeSelection = (
  request: ForgetRequest,
  selected: {
    readonly memories: ReadonlyArray<
      { readonly id: string; readonly chunkId: string | null; readonly documentId: string | null }
    >
    readonly entityIds: ReadonlyArray<string>
  }
): PurgeSelection => {
  const distinct = (values: ReadonlyArray<string | null>) => [...new Set(values.filter((v) => v !== null))]
  return {
    memoryIds: selected.memories.map((row) => row.id),
    entityIds: selected.entityIds,
    chunkIds: distinct(selected.memories.map((row) => row.chunkId)),
    documentIds: distinct(selected.memories.map((row) => row.documentId)),
    entity: request.entity ?? null,
    requestedIds: request.memory_ids ?? [],
    documentId: request.document_id ?? null,
    tag: request.tag ?? null
  }
}

export class Forget extends Context.Service<Forget, {
  readonly forget: (bankId: string, request: ForgetRequest) => Effect.Effect<ForgetReport, NotFound | ValidationError>
}>()("engram/memory/forgetting/Forget") {
  static readonly layer = Layer.effect(
    Forget,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const graph = yield* GraphRecall
      const keptBrainFile = yield* makeKeptBrainFile
      const models = yield* MentalModels
      const consolidation = yield* makeConsolidationRequests
      const audit = yield* AuditLogs
      const telemetry = yield* AccessTelemetry
      const requests = yield* makeEntityRequests
      const actors = yield* BankActors
      const foreground = yield* Foreground
      const sweepSlice = yield* makeSweepSlice
      forgetTuning.sliceAbove = yield* Config.Int("SERVICE_API_FORGET_SLICE_ABOVE").pipe(
        Config.withDefault(forgetTuning.sliceAbove)
      )

      /** The entity rows a forget names, and the conditions that select its memories. */
      const selection = Effect.fn("Forget.selection")(function*(bankId: string, request: ForgetRequest) {
        const entities = request.entity == null ? [] : yield* sql<{ id: string }>`
          SELECT DISTINCT e.id FROM entities e LEFT JOIN entity_aliases a ON a.entity_id = e.id
          WHERE e.bank_id = ${bankId} AND (lower(e.canonical_name) = lower(${request.entity}) OR lower(a.alias) = lower(${request.entity}))`
        const entityIds = entities.map((row) => row.id)
        const conditions = [
          ...(entityIds.length === 0
            ? []
            : [sql`id IN (SELECT unit_id FROM unit_entities WHERE entity_id IN ${sql.in(entityIds)})`]),
          ...(request.entity == null ? [] : [sql`text ILIKE ${likePattern(request.entity)}`]),
          ...(request.memory_ids == null || request.memory_ids.length === 0
            ? []
            : [sql`id IN ${sql.in([...request.memory_ids])}`]),
          ...(request.document_id == null ? [] : [sql`document_id = ${request.document_id}`]),
          ...(request.tag == null ? [] : [sql`${request.tag} = ANY(tags)`])
        ]
        return { entityIds, matching: sql.or(conditions) }
      })

      /**
       * The selected memories and, for an entity, the entity rows: read in the forget's own transaction (and, for a
       * purge's plan, once before it: the transaction compares the two).
       */
      const select = Effect.fn("Forget.select")(function*(bankId: string, request: ForgetRequest) {
        const { entityIds, matching } = yield* selection(bankId, request)
        const memories = yield* sql<
          { id: string; createdAt: Date | null; chunkId: string | null; documentId: string | null }
        >`SELECT id, created_at, chunk_id, document_id FROM memory_units WHERE bank_id = ${bankId} AND (${matching})`
        const archived = yield* sql<{ id: string }>`
          SELECT unit_id AS id FROM memory_unit_archive WHERE bank_id = ${bankId} AND (${
          sql.or([
            ...(request.entity == null ? [] : [
              sql`unit->>'text' ILIKE ${likePattern(request.entity)}`,
              sql`EXISTS (SELECT 1 FROM unnest(entity_names) n WHERE lower(n) = lower(${request.entity}))`
            ]),
            ...(request.memory_ids == null || request.memory_ids.length === 0
              ? []
              : [sql`unit_id IN ${sql.in([...request.memory_ids])}`]),
            ...(request.document_id == null ? [] : [sql`unit->>'document_id' = ${request.document_id}`]),
            ...(request.tag == null ? [] : [sql`unit->'tags' ? ${request.tag}`])
          ])
        })`
        return { memories, archived: archived.map((row) => row.id), entityIds }
      })

      /** Everything, in the caller's transaction. */
      const forgetInTransaction = Effect.fn("Forget.run")(
        function*(
          bankId: string,
          request: ForgetRequest,
          sliced: Sliced,
          prepared: PurgePlan | null
        ): Effect.fn.Return<Forgotten, SqlError, SqlClient.SqlClient> {
          const selected = yield* select(bankId, request)
          const ids = selected.memories.map((row) => row.id)
          const earliest = selected.memories.reduce<Date | null>(
            (first, row) => earlier(first, row.createdAt),
            sliced.earliest
          )
          const derived = yield* deleteEverythingDerived(consolidation, bankId, {
            ids,
            archived: selected.archived,
            entityIds: selected.entityIds,
            entity: request.entity ?? null,
            documentId: request.document_id ?? null
          })

          const purge = request.purge_history !== true ?
            null :
            yield* purgeHistory(bankId, purgeSelection(request, selected), prepared)
          if (purge !== null && request.dry_run !== true) {
            const at = new Date(yield* Clock.currentTimeMillis)
            yield* audit.record({
              bankId,
              action: "memories.purge_history",
              transport: "system",
              method: "PURGE",
              route:
                `memory repo history rewritten: ${purge.rewrites.length} commits, ${purge.objectsDeleted} objects deleted`,
              status: 200,
              actor: "system",
              startedAt: at,
              endedAt: at
            })
          }
          const commits = purge !== null ?
            purge.holding.map((commitId) => ({ commitId })) :
            earliest === null ?
            [] :
            yield* sql<{ commitId: string }>`
          SELECT c.commit_id FROM repo_commits c JOIN memory_repos r ON r.repo_id = c.repo_id
          WHERE (r.root_bank_id = ${bankId}
              OR r.repo_id IN (SELECT repo_id FROM repo_branches WHERE workspace_bank_id = ${bankId}))
            AND c.created_at >= ${earliest}
          ORDER BY c.created_at, c.commit_id`

          return {
            report: {
              bank_id: bankId,
              dry_run: request.dry_run === true,
              memory_ids: [...sliced.memoryIds, ...derived.deletion.memories].sort(),
              removed: addRemoved(sliced.removed, derived.removed),
              brain: { updated: false, file_rewritten: false },
              repo_commits: purge !== null
                ? {
                  commit_ids: commits.map((row) => row.commitId),
                  rewritten: request.dry_run !== true && purge.rewrites.length > 0,
                  note: purge.rewrites.length === 0
                    ? "no memory repo commit held the forgotten content"
                    : request.dry_run === true
                    ? "these commits hold the forgotten content; purge_history would rewrite them (and the commits after them) as listed"
                    : "history rewritten: these commits held the forgotten content; they and the commits after them have new ids",
                  rewrites: purge.rewrites,
                  objects_deleted: purge.objectsDeleted,
                  read_copies_dropped: purge.readCopiesDropped
                }
                : {
                  commit_ids: commits.map((row) => row.commitId),
                  rewritten: false,
                  note: commits.length === 0
                    ? "no memory repo commit was made since the forgotten memories were stored"
                    : "these commits may still hold the forgotten content; history is rewritten only with purge_history"
                }
            } satisfies ForgetReport,
            models: [...new Set([...sliced.models, ...derived.models])],
            wake: sliced.wake || derived.deletion.consolidationQueued,
            // Rolled back with a dry run.
            trajectoriesQueued: (yield* requests.queueTrajectories(bankId, derived.trajectoryEntityIds, "forget")) ||
              sliced.trajectoriesQueued
          }
        }
      )

      /**
       * A large forget's memories, deleted a slice at a time with everything derived from them (the sweeps' path),
       * each slice its own transaction under the bank's write lock; the trajectories a slice drops are queued in it.
       * Answers what the slices removed; nothing when the forget selects no more than `sliceAbove` memories.
       */
      const forgetInSlices = Effect.fn("Forget.slices")(function*(bankId: string, request: ForgetRequest) {
        const { matching } = yield* selection(bankId, request)
        const counted = yield* sql<{ n: number; earliest: Date | null }>`
          SELECT count(*)::int AS n, min(created_at) AS earliest FROM memory_units
          WHERE bank_id = ${bankId} AND (${matching})`
        const selected = counted[0]?.n ?? 0
        if (selected <= forgetTuning.sliceAbove) return nothingSliced
        let done: Sliced = { ...nothingSliced, earliest: counted[0]?.earliest ?? null }
        // Bounded by what was selected at the start: memories retained about it meanwhile go in the last transaction.
        while (done.memoryIds.length < selected) {
          const sliceStarted = performance.now()
          const slice = yield* sweepSlice(bankId, {
            action: "forget",
            auditAction: "memories.forget_slice",
            describe: (deleted) => `forget in slices: ${deleted} memories deleted (the request's entry follows it)`,
            pick: () =>
              Effect.gen(function*() {
                const { matching } = yield* selection(bankId, request)
                const picked = yield* sql<{ id: string }>`
                  SELECT id FROM memory_units WHERE bank_id = ${bankId} AND (${matching})
                  ORDER BY id LIMIT ${forgetTuning.sliceMemories}`
                return picked.map((row) => row.id)
              })
          })
          const { derived } = slice
          // Nothing left, or nothing a slice could delete (the last transaction then meets it): slicing is over.
          if (derived.deletion.memories.length === 0) return done
          done = {
            memoryIds: [...done.memoryIds, ...derived.deletion.memories],
            removed: addRemoved(done.removed, derived.removed),
            models: [...new Set([...done.models, ...derived.models])],
            wake: done.wake || derived.deletion.consolidationQueued,
            trajectoriesQueued: done.trajectoriesQueued || slice.trajectoriesQueued,
            earliest: done.earliest
          }
          yield* graph.changed(bankId)
          yield* foreground.shareAfterSlice(Duration.millis(performance.now() - sliceStarted))
        }
        return done
      })

      const forget = Effect.fn("Forget.forget")(function*(bankId: string, request: ForgetRequest) {
        const selectors = [request.entity, request.memory_ids, request.document_id, request.tag]
        if (selectors.every((selector) => selector == null || (Array.isArray(selector) && selector.length === 0))) {
          return yield* ValidationError.single("body", "name what to forget: entity, memory_ids, document_id or tag")
        }
        yield* banks.get(bankId)
        if (request.purge_history === true) {
          const enabling = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_repos
            WHERE root_bank_id = ${bankId} AND enable_progress IS NOT NULL`.pipe(Effect.orDie)
          if ((enabling[0]?.n ?? 0) > 0) {
            return yield* ValidationError.single(
              "purge_history",
              "the bank's memory repo is still building its first commit; retry when the enable has finished"
            )
          }
        }
        // The bank's reads' access events still buffered are written first: the forget removes them with the rest
        // (none is written afterwards naming a forgotten memory), and a dry run counts what the forget itself will.
        const sliced = request.dry_run === true || request.purge_history === true
          ? nothingSliced
          : yield* forgetInSlices(bankId, request).pipe(Effect.orDie)
        // The history purge's reads, in slices before the transaction (it redoes them only if the repo moves on).
        const prepared = request.purge_history !== true ? null : yield* select(bankId, request).pipe(
          Effect.flatMap((selected) =>
            planPurge(
              bankId,
              purgeSelection(request, selected),
              (held) => foreground.shareAfterSlice(Duration.millis(held))
            )
          ),
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        )
        yield* telemetry.writeBufferedOf(bankId)
        const result = yield* locks.withWriteLock(bankId)(
          forgetInTransaction(bankId, request, sliced, prepared).pipe(
            Effect.flatMap((outcome) =>
              request.dry_run === true ? Effect.fail(new RolledBack({ outcome })) : Effect.succeed(outcome)
            ),
            sql.withTransaction,
            Effect.provideService(SqlClient.SqlClient, sql)
          )
        ).pipe(
          Effect.catchTag("RolledBack", (rolledBack) => Effect.succeed(rolledBack.outcome)),
          Effect.orDie
        )
        if (request.dry_run === true) return result.report
        yield* graph.changed(bankId)
        if (result.wake) yield* consolidation.wake(bankId)
        if (result.trajectoriesQueued) yield* actors.wake(bankId)
        yield* Effect.forEach(result.models, (id) => Effect.ignore(models.refresh(bankId, id)), { discard: true })
        return { ...result.report, brain: yield* keptBrainFile(bankId) }
      })

      return Forget.of({ forget })
    })
  )
}
