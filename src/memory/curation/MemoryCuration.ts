/**
 * Curating one fact by hand: edit its text, context, times, type or entities, invalidate it (moved to the archive:
 * out of recall, consolidation and the graph, kept for audit) or restore it. Only world and experience facts are
 * curated; observations are derived and rebuild from their facts. Every write goes through the ordinary paths —
 * the change log trigger tells each bank brain, observations resting on the fact are released and requeued.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../../bank/BankActors.ts"
import { BankLocks } from "../../bank/BankLocks.ts"
import { Banks } from "../../bank/Banks.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { Conflict, NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import { effectiveEntitySettings } from "../../domain/EntitySettings.ts"
import type { CuratedMemory, UpdateMemoryRequest } from "../../domain/MemoryOps.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"
import { makeEntityRequests } from "../../entities/EntityRequests.ts"
import { Embeddings, modelKey } from "../../models/Embeddings.ts"
import { param } from "../../storage/VectorParam.ts"
import { makeConsolidationRequests, observationsEnabled } from "../consolidation/ConsolidationRequests.ts"
import { requeueEditedFacts } from "../consolidation/FactRequeue.ts"
import { MemoryUnits } from "../MemoryUnits.ts"
import { GraphRecall } from "../recall/GraphRecall.ts"
import { cjkTerms } from "../recall/SearchTerms.ts"
import { contentHash } from "../retain/ContentHash.ts"
import { linkNew } from "../retain/MemoryLinks.ts"
import { setEntitiesExactly } from "./ExactEntities.ts"
import { liveAt } from "../forgetting/Expiry.ts"
import { ExpiryWakeups } from "../forgetting/ExpiryWakeups.ts"
import { makeMemoryRemoval } from "../forgetting/MemoryDeletion.ts"
import {
  type ArchivedRow,
  findArchived,
  moveToArchive,
  restoreFromArchive,
  restoreRestingOpinions
} from "./MemoryArchive.ts"

const editFields = ["text", "context", "occurred_start", "occurred_end", "fact_type", "entities"] as const

const given = <A>(value: A | null | undefined): value is A => value !== undefined && value !== null

/** An archived unit as stored (a `memory_units` row as JSON): the scalar fields are checked where they are read. */
type ArchivedUnit = Record<string, unknown> & {
  readonly metadata?: Readonly<Record<string, string>>
  readonly tags?: ReadonlyArray<string>
  readonly source_fact_ids?: ReadonlyArray<string> | null
}

/** An archived row as the API shows a memory: the unit as it was, with its curation state. */
const archivedView = (row: ArchivedRow): CuratedMemory => {
  const unit = row.unit as ArchivedUnit
  const text = (value: unknown) => (typeof value === "string" ? value : null)
  const time = (value: unknown) => (typeof value === "string" ? new Date(value).toISOString() : null)
  return {
    id: row.unitId,
    text: String(unit["text"] ?? ""),
    type: text(unit["fact_type"]),
    fact_type: String(unit["fact_type"] ?? ""),
    entities: [...row.entityNames],
    context: text(unit["context"]),
    occurred_start: time(unit["occurred_start"]),
    occurred_end: time(unit["occurred_end"]),
    mentioned_at: time(unit["mentioned_at"]),
    document_id: text(unit["document_id"]),
    metadata: unit["metadata"] ?? {},
    chunk_id: text(unit["chunk_id"]),
    tags: unit["tags"] ?? [],
    source_fact_ids: unit["source_fact_ids"] ?? null,
    confidence: typeof unit["confidence"] === "number" ? unit["confidence"] : null,
    created_at: time(unit["created_at"]),
    superseded_by: text(unit["superseded_by"]),
    state: "invalidated",
    invalidation_reason: row.reason,
    invalidated_at: iso(row.invalidatedAt),
    history: []
  }
}

export class MemoryCuration extends Context.Service<MemoryCuration, {
  readonly update: (
    bankId: string,
    memoryId: string,
    request: UpdateMemoryRequest
  ) => Effect.Effect<CuratedMemory, NotFound | ValidationError | Conflict | ServiceUnavailable>
  /** A memory, live or invalidated, with its curation state. */
  readonly get: (bankId: string, memoryId: string) => Effect.Effect<CuratedMemory, NotFound>
}>()("engram/memory/curation/MemoryCuration") {
  static readonly layer = Layer.effect(
    MemoryCuration,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const locks = yield* BankLocks
      const units = yield* MemoryUnits
      const embeddings = yield* Embeddings
      const graph = yield* GraphRecall
      const config = yield* EngramConfig
      const consolidation = yield* makeConsolidationRequests
      const expiries = yield* ExpiryWakeups
      const removal = yield* makeMemoryRemoval
      const requests = yield* makeEntityRequests
      const actors = yield* BankActors
      const inTransaction = <A, E, R>(bankId: string, effect: Effect.Effect<A, E, R>) =>
        locks.withWriteLock(bankId)(effect.pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql)))

      const get = Effect.fn("MemoryCuration.get")(function*(bankId: string, memoryId: string) {
        const live = yield* units.get(bankId, memoryId).pipe(Effect.option)
        if (live._tag === "Some") {
          return {
            ...live.value,
            state: "valid",
            invalidation_reason: null,
            invalidated_at: null,
            history: []
          } as CuratedMemory
        }
        const archived = yield* findArchived(bankId, memoryId).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        )
        if (archived === undefined) return yield* NotFound.of("memory", memoryId)
        return archivedView(archived)
      })

      /** The edits of the request, applied to a live fact in one transaction (the vector computed before it). */
      const applyEdits = Effect.fn("MemoryCuration.applyEdits")(function*(
        bankId: string,
        memoryId: string,
        request: UpdateMemoryRequest,
        vector: Float32Array | undefined
      ) {
        const at = (value: string) => (value === "" ? null : new Date(value).toISOString())
        if (given(request.text) && vector !== undefined) {
          yield* sql`UPDATE memory_units SET text = ${request.text}, content_hash = ${contentHash(request.text)},
              embedding = ${param(vector)}::vector, embedding_model = ${modelKey(embeddings.identity)},
              search_text = to_tsvector('english', ${request.text}) || to_tsvector('simple', ${cjkTerms(request.text)}),
              updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
          // Links derived from the old wording go; causal links come from the source and stay.
          yield* sql`DELETE FROM memory_links WHERE bank_id = ${bankId} AND link_type IN ('semantic', 'temporal')
            AND (from_id = ${memoryId} OR to_id = ${memoryId})`
        }
        if (given(request.context)) {
          yield* sql`UPDATE memory_units SET context = ${
            request.context === "" ? null : request.context
          }, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.occurred_start)) {
          yield* sql`UPDATE memory_units SET occurred_start = ${
            at(request.occurred_start)
          }::timestamptz, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.occurred_end)) {
          yield* sql`UPDATE memory_units SET occurred_end = ${at(request.occurred_end)}::timestamptz, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.expires_at)) {
          yield* sql`UPDATE memory_units SET expires_at = ${at(request.expires_at)}::timestamptz, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.fact_type)) {
          yield* sql`UPDATE memory_units SET fact_type = ${request.fact_type}, updated_at = now()
            WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.entities)) {
          yield* setEntitiesExactly(bankId, memoryId, request.entities)
          // Its mentions and entity links changed, not its row: naming `tags` in the update writes the change-log
          // entry that makes every bank brain (and a kept `.brain` file's catch-up) read the memory and its links again.
          yield* sql`UPDATE memory_units SET tags = tags, updated_at = now() WHERE bank_id = ${bankId} AND id = ${memoryId}`
        }
        if (given(request.text) || given(request.entities) || given(request.occurred_start)) {
          const dims = sql.literal(String(Math.trunc(embeddings.identity.dimensions)))
          yield* linkNew(bankId, [memoryId], modelKey(embeddings.identity), dims)
        }
      })

      const update = Effect.fn("MemoryCuration.update")(function*(
        bankId: string,
        memoryId: string,
        request: UpdateMemoryRequest
      ) {
        const bank = yield* banks.get(bankId)
        const edits = editFields.filter((field) => given(request[field]))
        if (edits.length === 0 && !given(request.state) && !given(request.expires_at)) {
          return yield* ValidationError.single(
            "body",
            "give at least one field to change (text, context, occurred_start, occurred_end, fact_type, entities, state, expires_at)"
          )
        }
        const now = yield* Clock.currentTimeMillis
        if (given(request.expires_at) && request.expires_at !== "" && Date.parse(request.expires_at) <= now) {
          return yield* ValidationError.single("expires_at", "must be in the future, or \"\" to clear it")
        }
        if (
          given(request.occurred_start) && given(request.occurred_end) && request.occurred_start !== "" &&
          request.occurred_end !== "" && Date.parse(request.occurred_end) < Date.parse(request.occurred_start)
        ) {
          return yield* ValidationError.single("occurred_end", "must not be before occurred_start")
        }
        // An expired memory is gone for every read, so for an edit too (the sweep deletes it).
        const live = yield* sql<{ factType: string }>`SELECT fact_type FROM memory_units u
          WHERE bank_id = ${bankId} AND id = ${memoryId} AND ${liveAt(sql, "u", new Date(now))}`.pipe(Effect.orDie)
        const archived = live.length > 0
          ? undefined
          : yield* findArchived(bankId, memoryId).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
        if (live.length === 0 && archived === undefined) return yield* NotFound.of("memory", memoryId)
        const factType = live[0]?.factType ?? String(archived?.unit["fact_type"] ?? "")
        if (factType !== "world" && factType !== "experience") {
          return yield* ValidationError.single(
            "memory_id",
            `only world and experience facts can be curated; this memory is an ${factType}, derived from facts`,
            "path"
          )
        }
        if (archived !== undefined && request.state !== "valid" && (edits.length > 0 || given(request.expires_at))) {
          return yield* new Conflict({
            detail: `memory '${memoryId}' is invalidated: restore it (state: "valid") before editing it`
          })
        }
        const vector = given(request.text)
          ? (yield* embeddings.embedDocuments([request.text]).pipe(
            Effect.mapError((error) => new ServiceUnavailable({ detail: `embedding failed: ${error.message}` }))
          ))[0]
          : undefined
        const observationsOn = observationsEnabled(bank, config.enableObservations)
        const invalidation = removal.session(bankId, "invalidate")
        let trajectoriesQueued = false
        const wake = yield* inTransaction(
          bankId,
          Effect.gen(function*() {
            if (archived !== undefined) {
              if (request.state === "invalidated") {
                // Already archived: only the recorded reason can change.
                if (given(request.reason)) {
                  yield* sql`UPDATE memory_unit_archive SET reason = ${request.reason}
                  WHERE bank_id = ${bankId} AND unit_id = ${memoryId}`
                }
                return false
              }
              yield* restoreFromArchive(bankId, memoryId)
            }
            yield* applyEdits(bankId, memoryId, request, vector)
            if (request.state === "invalidated") {
              // What rests on it goes (`invalidation.afterCommit` wakes consolidation and refreshes models).
              yield* moveToArchive(bankId, memoryId, request.reason ?? null, invalidation.remove)
              return false
            }
            if (archived === undefined && edits.length === 0) return false
            const dims = sql.literal(String(Math.trunc(embeddings.identity.dimensions)))
            if (archived !== undefined) {
              // The opinions its invalidation set aside come back with it once all they rest on is live again.
              const opinions = yield* restoreRestingOpinions(bankId, memoryId)
              yield* linkNew(bankId, [memoryId, ...opinions], modelKey(embeddings.identity), dims)
              // The trajectories of the entities it names were computed without it (its invalidation queued that):
              // computed again with it, queued with the restore. With automatic trajectories on, every entity it names
              // is queued, also one whose trajectory the invalidation dropped for too few facts (the run skips an
              // entity still below the minimum); otherwise only those that have one, as a retain would leave them.
              const everyEntity = effectiveEntitySettings(bank.entitySettings).enableEntityTrajectories
              const named = yield* sql<{ entityId: string }>`SELECT DISTINCT ue.entity_id FROM unit_entities ue
                WHERE ue.unit_id IN ${sql.in([memoryId, ...opinions])} AND (${everyEntity} OR EXISTS (
                  SELECT 1 FROM entity_trajectories t WHERE t.bank_id = ${bankId} AND t.entity_id = ue.entity_id))`
              trajectoriesQueued = yield* requests.queueTrajectories(
                bankId,
                named.map((row) => row.entityId),
                "restore"
              )
            }
            return yield* requeueEditedFacts(consolidation, bankId, [memoryId], observationsOn)
          })
        ).pipe(Effect.orDie)
        yield* invalidation.afterCommit
        yield* graph.changed(bankId)
        if (wake) yield* consolidation.wake(bankId)
        if (trajectoriesQueued) yield* actors.wake(bankId)
        if (given(request.expires_at) && request.expires_at !== "") yield* expiries.notify
        return yield* get(bankId, memoryId)
      })

      return MemoryCuration.of({ update, get })
    })
  )
}
