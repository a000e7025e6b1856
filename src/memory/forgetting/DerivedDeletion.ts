/**
 * Deleting memories with what was derived from them, inside the caller's transaction (under the bank's write lock).
 * `deleteWithDerived`: the memories and their links and entity mentions (cascade), entity counts recounted, entities
 * no memory names any longer, and the observations resting on them (their surviving facts queued for consolidation,
 * so those observations are rebuilt without the deleted content). `deleteEverythingDerived`, the one path forget and
 * the expiry and retention sweeps share, adds everything else that cites the memories or names a forgotten entity:
 * opinions formed from them, mental models (emptied, for the caller to refresh after the commit), dream runs,
 * predictions, proposals and outcomes, anomalies, access history, dataset sets, invalidated copies, chunks and
 * documents nothing uses any more, and the entity map. The brain learns of every deleted memory from the change log, which a trigger writes in the
 * same transaction: after the commit the caller calls `GraphRecall.changed`, wakes consolidation when told to,
 * refreshes the emptied models and rewrites the kept `.brain` file (`KeptBrainFile`). One transaction, so a crash
 * leaves each memory present with its derived state or gone with it. Every other removal uses `deleteEverythingDerived`
 * too (`MemoryDeletion`): the ordinary deletes (a memory by id, a clear, a document), a document replaced by a retain,
 * a reprocess or an import, and an invalidation; `RemovalKind` says what each of them keeps.
 */
import { Effect } from "effect"
import type { ForgetRemoved } from "../../domain/Forget.ts"
import { SqlClient } from "effect/sql"
import { consolidateTask, type makeConsolidationRequests } from "../consolidation/ConsolidationRequests.ts"
import { releaseObservationsOf } from "../consolidation/ObservationResets.ts"
import { deleteUnitsAndRecount } from "../retain/EntityMentions.ts"
import { archiveRows, restingOpinionReason } from "../curation/MemoryArchive.ts"
import { rewriteDocumentTexts } from "./DocumentText.ts"

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

/**
 * Deletes the given entities (or every entity of the bank) that no memory names any longer; their aliases, mentions
 * and trajectories cascade. Answers how many went.
 */
export const pruneUnnamedEntities = Effect.fn("Forgetting.pruneUnnamedEntities")(function*(
  bankId: string,
  among: ReadonlyArray<string> | "all"
) {
  const sql = yield* SqlClient.SqlClient
  if (among !== "all" && among.length === 0) return 0
  const pruned = yield* sql`DELETE FROM entities e WHERE e.bank_id = ${bankId}
    ${among === "all" ? sql`` : sql`AND e.id IN ${sql.in([...among])}`}
    AND NOT EXISTS (SELECT 1 FROM unit_entities ue WHERE ue.entity_id = e.id) RETURNING e.id`
  return pruned.length
})

export const deleteWithDerived = Effect.fn("Forgetting.deleteWithDerived")(function*(
  consolidation: ConsolidationRequests,
  bankId: string,
  ids: ReadonlyArray<string>,
  prune = true
) {
  const sql = yield* SqlClient.SqlClient
  if (ids.length === 0) {
    return {
      memories: [],
      observationsReleased: 0,
      entitiesPruned: 0,
      consolidationQueued: false
    } satisfies DerivedDeletion
  }
  const memories = yield* deleteUnitsAndRecount(bankId, sql`id IN ${sql.in([...ids])}`)
  const released = yield* releaseObservationsOf(bankId, memories)
  const pruned = prune ? yield* pruneUnnamedEntities(bankId, "all") : 0
  if (released > 0) yield* consolidation.enqueue(bankId, consolidateTask, "delete")
  return {
    memories,
    observationsReleased: released,
    entitiesPruned: pruned,
    consolidationQueued: released > 0
  } satisfies DerivedDeletion
})

/** What goes besides the memories themselves: their ids, and for a forget the entity it names. */
export interface DerivedSelection {
  /** Live memories to delete. */
  readonly ids: ReadonlyArray<string>
  /** Invalidated copies (the archive) to delete. */
  readonly archived: ReadonlyArray<string>
  /** Entities to delete whatever else names them (a forgotten entity). */
  readonly entityIds: ReadonlyArray<string>
  /** A forgotten entity's name: derived text naming it goes too. */
  readonly entity: string | null
  /** A forgotten document: it goes when no memory uses it any more. */
  readonly documentId: string | null
  /** Why the memories go, which decides what of theirs is kept (`forget` when absent). */
  readonly kind?: RemovalKind
}

/**
 * Why memories are removed. Each kind deletes the memories, the opinions resting on them, the observations built on
 * them (released to be rebuilt), their links and mentions, the entity times they set, the mental models citing them
 * (emptied), dream runs, predictions, proposals and outcomes, anomalies, observation versions, refresh records and
 * entity trajectories whose path runs through them; what differs is what is kept:
 * - `forget` (forget and the expiry and retention sweeps): nothing.
 * - `delete` (a memory by id, a clear, a document): anomaly events a user suppressed ("these two do not conflict"),
 *   whose pair key, a hash of the statements' content, keeps the pair from being reported when the same statements
 *   are stored again (deleting a document to retain it again is how content is restated).
 * - `replace` (a document retained again in replace mode, reprocessed or imported over): the suppressed anomalies; the
 *   document and its chunks, which the writer rewrites itself; dataset sets, which only stop citing the old memories
 *   (a set is retained again by replacing its own document); entities, which the writer prunes once the new facts
 *   named theirs (an entity the new text names again keeps its id, aliases and trajectory).
 * - `invalidate` (reversible: the memory waits in the archive): the suppressed anomalies, its chunk and document, its
 *   access history and the dataset sets citing it, all of which it needs when it is restored.
 */
export type RemovalKind = "forget" | "delete" | "replace" | "invalidate"

export interface EverythingDerived {
  readonly deletion: DerivedDeletion
  readonly removed: ForgetRemoved
  /** Mental models emptied: the caller refreshes them after the commit. */
  readonly models: ReadonlyArray<string>
  /** Entities the deleted memories named (a `replace` prunes those left unnamed after writing its new facts). */
  readonly namedEntityIds: ReadonlyArray<string>
  /**
   * Entities whose trajectory ran through a deleted memory and was deleted (not the forgotten entities): the caller
   * may queue their recompute, so the trajectory comes back without what was removed.
   */
  readonly trajectoryEntityIds: ReadonlyArray<string>
  readonly chunkIds: ReadonlyArray<string>
  readonly documentIds: ReadonlyArray<string>
}

/** `text` anywhere in a value, for `ILIKE`: its `\`, `%` and `_` taken literally. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`

export const deleteEverythingDerived = Effect.fn("Forgetting.deleteEverythingDerived")(function*(
  consolidation: ConsolidationRequests,
  bankId: string,
  selection: DerivedSelection
) {
  const sql = yield* SqlClient.SqlClient
  // An opinion rests on the memories the reflect answer it was formed from cited (`source_fact_ids`), and it can
  // only be formed again by another reflect: one resting on a deleted memory goes with it, as does one resting on
  // such an opinion. (Otherwise its text, which may quote the memory without naming the entity, would outlive it.)
  const opinions = selection.ids.length === 0 ? [] : yield* sql<{ id: string }>`WITH RECURSIVE resting (id) AS (
      SELECT id FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'opinion'
        AND source_fact_ids && ${[...selection.ids]}::text[]
      UNION
      SELECT o.id FROM memory_units o JOIN resting r ON o.source_fact_ids @> ARRAY[r.id]
      WHERE o.bank_id = ${bankId} AND o.fact_type = 'opinion'
    ) SELECT id FROM resting`
  const ids = opinions.length === 0 ? selection.ids : [...new Set([...selection.ids, ...opinions.map((row) => row.id)])]
  const count = (rows: ReadonlyArray<unknown>) => rows.length
  const none = sql`false`
  const idList = ids.length === 0 ? null : ids
  // Derived state that names the memories by id, read before they go (their rows cite them).
  const chunkIds = idList === null ? [] : (yield* sql<{ chunkId: string }>`SELECT DISTINCT chunk_id FROM memory_units
    WHERE id IN ${sql.in(idList)} AND chunk_id IS NOT NULL`).map((row) => row.chunkId)
  const documentIds = idList === null ?
    [] :
    (yield* sql<{ documentId: string }>`SELECT DISTINCT document_id FROM memory_units
    WHERE id IN ${sql.in(idList)} AND document_id IS NOT NULL`).map((row) => row.documentId)
  const kind = selection.kind ?? "forget"
  const keepsSources = kind === "replace" || kind === "invalidate"
  // The entities they name, read before the cascade removes their mentions: trajectories whose path runs through a
  // deleted memory are among theirs, and a replace prunes them after writing the new facts.
  const namedEntityIds = idList === null ? [] : (yield* sql<{ entityId: string }>`SELECT DISTINCT entity_id
    FROM unit_entities WHERE unit_id IN ${sql.in(idList)}`).map((row) => row.entityId)
  const cites = (column: string) => idList === null ? none : sql`${sql.literal(column)} && ${idList}::text[]`
  const names = (column: string) =>
    selection.entity == null ? none : sql`${sql.literal(column)} ILIKE ${likePattern(selection.entity)}`

  const modelRows = yield* sql<{ id: string }>`UPDATE mental_models
    SET content = '', reflect_response = NULL, last_refreshed_at = NULL, updated_at = now()
    WHERE bank_id = ${bankId} AND (${names("content")} OR ${
    sql.or([
      ...ids.slice(0, 2_000).map((id) => sql`reflect_response::text LIKE ${likePattern(id)}`),
      none
    ])
  })
    RETURNING id`
  const dreamRuns = yield* sql`DELETE FROM dream_runs WHERE bank_id = ${bankId}
    AND (${cites("evidence_ids")} OR ${names("coalesce(summary, '') || coalesce(narrative_html, '')")}) RETURNING id`
  const predictions = yield* sql`DELETE FROM dream_predictions WHERE bank_id = ${bankId}
    AND (${cites("supporting_evidence_ids")} OR ${names("title || ' ' || description")}) RETURNING id`
  const proposals = yield* sql`DELETE FROM dream_proposals WHERE bank_id = ${bankId}
    AND (${cites("supporting_evidence_ids")} OR ${names("title || ' ' || content")}) RETURNING id`
  yield* sql`DELETE FROM dream_prediction_outcomes WHERE bank_id = ${bankId} AND ${cites("evidence_ids")}`
  // A fact that a deleted memory replaced is current again at the confidence it had: clearing its `superseded_by`
  // here, while the anomaly's correction still holds that confidence, lets the restoring trigger (migration 0016)
  // find it; the foreign key's own SET NULL would fire only after the correction is gone with its anomaly.
  if (idList !== null) {
    yield* sql`UPDATE memory_units SET superseded_by = NULL
      WHERE bank_id = ${bankId} AND superseded_by IN ${sql.in(idList)}`
  }
  const anomalies = yield* sql`DELETE FROM anomaly_events WHERE bank_id = ${bankId}
    AND (${cites("unit_ids")} OR ${names("description")}
      ${selection.entityIds.length === 0 ? sql`` : sql`OR entity_ids && ${selection.entityIds}::text[]`})
    ${kind === "forget" ? sql`` : sql`AND status <> 'suppressed'`} RETURNING id`
  const accesses = idList === null || kind === "invalidate" ? [] : yield* sql`DELETE FROM memory_access_events
    WHERE bank_id = ${bankId} AND item_type = 'memory' AND item_id IN ${sql.in(idList)} RETURNING seq`
  const datasetSets = kind === "invalidate" ?
    [] :
    kind === "replace" ?
    yield* sql`UPDATE taste_sets SET memory_unit_ids = ARRAY(
        SELECT m FROM unnest(memory_unit_ids) m WHERE NOT (m = ANY(${idList ?? []}::text[]))), updated_at = now()
      WHERE bank_id = ${bankId} AND ${cites("memory_unit_ids")} RETURNING id` :
    yield* sql`DELETE FROM taste_sets WHERE bank_id = ${bankId} AND ${cites("memory_unit_ids")} RETURNING id`
  // Histories that quote the memories: an observation's versions, a model's refresh records, anomaly corrections.
  yield* sql`DELETE FROM observation_history WHERE bank_id = ${bankId} AND (${cites("source_fact_ids")}
    OR ${cites("added_fact_ids")} OR ${idList === null ? none : sql`observation_id IN ${sql.in(idList)}`}
    OR ${names("coalesce(text, '') || ' ' || coalesce(previous_text, '')")})`
  yield* sql`DELETE FROM mental_model_refreshes WHERE bank_id = ${bankId} AND (${cites("new_fact_ids")}
    OR ${names("coalesce(previous_content, '') || ' ' || coalesce(content, '')")})`
  if (idList !== null) {
    yield* sql`DELETE FROM anomaly_corrections WHERE bank_id = ${bankId} AND target_unit_id IN ${sql.in(idList)}`
  }
  const archived = selection.archived.length === 0 ? [] : yield* sql`DELETE FROM memory_unit_archive
    WHERE bank_id = ${bankId} AND unit_id IN ${sql.in(selection.archived)} RETURNING unit_id`
  // An invalidation keeps the opinions resting on the memory (and on those) in the archive beside it, to come back
  // with it (`restoreRestingOpinions`); any other removal ends that wait for the opinions resting on what it removes.
  if (kind === "invalidate") {
    yield* archiveRows(bankId, opinions.map((row) => row.id), restingOpinionReason)
  }
  const gone = kind === "invalidate" ? [] : [...ids, ...selection.archived]
  const waitingOpinions = gone.length === 0 ? [] : yield* sql`WITH RECURSIVE resting (id) AS (
      SELECT unit_id FROM memory_unit_archive WHERE bank_id = ${bankId} AND unit->>'fact_type' = 'opinion'
        AND jsonb_typeof(unit->'source_fact_ids') = 'array' AND (unit->'source_fact_ids') ?| ${gone}::text[]
      UNION
      SELECT a.unit_id FROM memory_unit_archive a JOIN resting r ON (a.unit->'source_fact_ids') ? r.id
      WHERE a.bank_id = ${bankId} AND a.unit->>'fact_type' = 'opinion'
        AND jsonb_typeof(a.unit->'source_fact_ids') = 'array'
    ) DELETE FROM memory_unit_archive WHERE bank_id = ${bankId} AND unit_id IN (SELECT id FROM resting)
    RETURNING unit_id`

  // The entity itself goes (its trajectory and aliases cascade), whatever else still names it.
  const trajectories = yield* sql`SELECT 1 FROM entity_trajectories WHERE bank_id = ${bankId}
    AND entity_id IN ${sql.in(selection.entityIds.length === 0 ? [""] : selection.entityIds)}`
  const forgottenEntities = selection.entityIds.length === 0 ? [] : yield* sql`DELETE FROM entities
    WHERE bank_id = ${bankId} AND id IN ${sql.in(selection.entityIds)} RETURNING id`
  // A trajectory's path shows a preview of each fact it runs through: one through a deleted memory goes, and every
  // caller queues its recompute in the same transaction (`EntityRequests.queueTrajectories`, from `trajectoryEntityIds`).
  // Only the named entities' rows.
  const throughDeleted = idList === null || namedEntityIds.length === 0 ?
    [] :
    yield* sql`DELETE FROM entity_trajectories t
    WHERE t.bank_id = ${bankId} AND t.entity_id IN ${sql.in(namedEntityIds)}
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.viterbi_path) s WHERE s ->> 'unit_id' = ANY(${idList}::text[]))
    RETURNING t.entity_id`
  const deleted = yield* deleteWithDerived(consolidation, bankId, ids, kind !== "replace")
  const chunks = keepsSources || chunkIds.length === 0 ?
    [] :
    yield* sql`DELETE FROM chunks c WHERE c.bank_id = ${bankId}
    AND c.id IN ${
      sql.in(chunkIds)
    } AND NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.chunk_id = c.id) RETURNING c.id, c.document_id`
  const documents = keepsSources ? [] : yield* sql`DELETE FROM documents d WHERE d.bank_id = ${bankId}
    AND (d.document_id IN ${sql.in(documentIds.length === 0 ? [""] : documentIds)}
      ${selection.documentId == null ? sql`` : sql`OR d.document_id = ${selection.documentId}`})
    AND NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.bank_id = d.bank_id AND u.document_id = d.document_id)
    RETURNING d.document_id`
  if (documents.length > 0) {
    yield* sql`DELETE FROM chunks WHERE bank_id = ${bankId}
      AND document_id IN ${sql.in(documents.map((row) => String(row["documentId"])))}`
  }
  // A document other memories still use loses the deleted chunks' text from its whole text too.
  const documentsGone = new Set(documents.map((row) => String(row["documentId"])))
  yield* rewriteDocumentTexts(
    sql,
    bankId,
    chunks.map((row) => String(row["documentId"])).filter((id) => !documentsGone.has(id))
  )
  // The bank's entity map is built from every entity: any forgotten one (or its name in it) drops it.
  const intelligence = yield* sql`DELETE FROM entity_intelligence WHERE bank_id = ${bankId}
    AND (${forgottenEntities.length + deleted.entitiesPruned > 0} OR ${names("content")}) RETURNING bank_id`

  const removed: ForgetRemoved = {
    memories: deleted.memories.length,
    invalidated_memories: count(archived) + count(waitingOpinions),
    observations: deleted.observationsReleased,
    entities: forgottenEntities.length + deleted.entitiesPruned,
    trajectories: count(trajectories) + count(throughDeleted),
    entity_intelligence: count(intelligence),
    mental_models_marked_stale: count(modelRows),
    dream_runs: count(dreamRuns),
    dream_predictions: count(predictions),
    dream_proposals: count(proposals),
    anomalies: count(anomalies),
    access_events: count(accesses),
    chunks: count(chunks),
    documents: count(documents),
    dataset_sets: count(datasetSets)
  }
  return {
    deletion: deleted,
    removed,
    models: modelRows.map((row) => String(row["id"])),
    namedEntityIds,
    trajectoryEntityIds: throughDeleted.map((row) => String(row["entityId"])),
    chunkIds: chunks.map((row) => String(row["id"])),
    documentIds: documents.map((row) => String(row["documentId"]))
  } satisfies EverythingDerived
})

/** A sweep's selection: only these memories, no entity named. */
export const sweptOnly = (ids: ReadonlyArray<string>): DerivedSelection => ({
  ids,
  archived: [],
  entityIds: [],
  entity: null,
  documentId: null
})

export const noneRemoved: ForgetRemoved = {
  memories: 0,
  invalidated_memories: 0,
  observations: 0,
  entities: 0,
  trajectories: 0,
  entity_intelligence: 0,
  mental_models_marked_stale: 0,
  dream_runs: 0,
  dream_predictions: 0,
  dream_proposals: 0,
  anomalies: 0,
  access_events: 0,
  chunks: 0,
  documents: 0,
  dataset_sets: 0
}

/** Per-kind totals over a sweep's slices. */
export const addRemoved = (a: ForgetRemoved, b: ForgetRemoved): ForgetRemoved => {
  const sum: Record<string, number> = {}
  for (const key of Object.keys(a) as Array<keyof ForgetRemoved>) sum[key] = a[key] + b[key]
  return sum as ForgetRemoved
}
