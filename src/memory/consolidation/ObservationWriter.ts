/**
 * Writes one consolidation batch: observations created, updated and merged (with vectors and full-text index so
 * recall finds them, their time span taken from their facts, the entities their text names), one history row per
 * change, and the batch's facts marked consolidated — all in the caller's transaction, so a crash either keeps
 * the whole batch or none of it and a re-run starts from the facts still pending.
 */
import { Array as Arr, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { param } from "../../storage/VectorParam.ts"
import { contentHash } from "../retain/ContentHash.ts"
import { cjkTerms } from "../recall/SearchTerms.ts"
import type { ObservationDraft } from "./ConsolidationFact.ts"
import type { VectorSpace } from "./ObservationReads.ts"

export interface EmbeddedDraft extends ObservationDraft {
  readonly embedding: Float32Array
}

export interface WriteOutcome {
  readonly created: number
  readonly updated: number
  readonly merged: number
  readonly removed: number
}

/**
 * Observation hashes live in their own namespace: retain's exact-duplicate check compares content hashes across
 * the bank, and a new fact must never be dropped because an observation happens to say the same words.
 */
export const observationHash = (text: string) => `o${contentHash(text).slice(1)}`

export const writeObservations = Effect.fn("ObservationWriter.write")(function*(batch: {
  readonly bankId: string
  readonly operationId: string | null
  readonly space: VectorSpace
  readonly drafts: ReadonlyArray<EmbeddedDraft>
  /** Facts this batch consolidated (with or without an observation). */
  readonly factIds: ReadonlyArray<string>
}) {
  const sql = yield* SqlClient.SqlClient
  const { bankId, space } = batch
  const absorbed = [...new Set(batch.drafts.flatMap((draft) => draft.absorbedIds))]
  // An observation deleted while this batch was planned (DELETE observations, a reset) is created anew.
  const targets = batch.drafts.flatMap((draft) => draft.targetId === null ? [] : [draft.targetId])
  const present = new Set(
    targets.length === 0 ? [] : (yield* sql<{ id: string }>`SELECT id FROM memory_units
    WHERE bank_id = ${bankId} AND fact_type = 'observation' AND id IN ${sql.in(targets)}`).map((row) => row.id)
  )
  const drafts = batch.drafts.map((draft): ObservationDraft & { readonly embedding: Float32Array } =>
    draft.targetId === null || present.has(draft.targetId)
      ? draft
      : { ...draft, targetId: null, change: "created", previousText: null, addedFactIds: draft.sourceFactIds }
  )
  if (absorbed.length > 0) {
    yield* sql`DELETE FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'observation'
      AND id IN ${sql.in(absorbed)}`
  }
  const withIds = drafts.map((draft) => ({ ...draft, id: draft.targetId ?? crypto.randomUUID() }))
  const row = (draft: typeof withIds[number]) => ({
    id: draft.id,
    text: draft.text,
    tags: draft.scope,
    source_fact_ids: draft.sourceFactIds,
    consolidation_key: draft.key,
    content_hash: observationHash(draft.text),
    embedding: param(draft.embedding),
    cjk: cjkTerms(draft.text)
  })
  const creates = withIds.filter((draft) => draft.targetId === null).map(row)
  const updates = withIds.filter((draft) => draft.targetId !== null).map(row)
  const columns = sql`x(id text, text text, tags text[], source_fact_ids text[], consolidation_key text,
    content_hash text, embedding text, cjk text)`
  // An observation's times span its facts'. Computed in the statement that writes it: a second UPDATE of the same
  // rows wrote each observation twice, and no update of `memory_units` is HOT (its indexes cover the columns), so
  // each write inserts the row into every index again, its HNSW point included.
  const times = sql`LATERAL (
    SELECT min(f.occurred_start) AS first_start, max(coalesce(f.occurred_end, f.occurred_start)) AS last_end,
      max(f.mentioned_at) AS last_said, count(*) AS facts
    FROM memory_units f WHERE f.id = ANY(x.source_fact_ids)) s`
  if (creates.length > 0) {
    yield* sql`
      INSERT INTO memory_units (id, bank_id, text, fact_type, tags, source_fact_ids, consolidation_key, content_hash,
        embedding, embedding_model, search_text, operation_id, observation_version, occurred_start, occurred_end,
        mentioned_at)
      SELECT x.id, ${bankId}, x.text, 'observation', coalesce(x.tags, '{}'), x.source_fact_ids, x.consolidation_key,
        x.content_hash, x.embedding::vector, ${space.model},
        to_tsvector('english', x.text) || to_tsvector('simple', x.cjk), ${batch.operationId}, 1,
        s.first_start, s.last_end, s.last_said
      FROM jsonb_to_recordset(${JSON.stringify(creates)}::jsonb) AS ${columns} CROSS JOIN ${times}`
  }
  if (updates.length > 0) {
    yield* sql`
      UPDATE memory_units u SET text = x.text, source_fact_ids = x.source_fact_ids,
        consolidation_key = coalesce(x.consolidation_key, u.consolidation_key), content_hash = x.content_hash,
        embedding = x.embedding::vector, embedding_model = ${space.model},
        search_text = to_tsvector('english', x.text) || to_tsvector('simple', x.cjk),
        observation_version = coalesce(u.observation_version, 1) + 1, operation_id = ${batch.operationId},
        -- None of its facts left (deleted while the batch was planned): it keeps the times it had.
        occurred_start = CASE WHEN s.facts > 0 THEN s.first_start ELSE u.occurred_start END,
        occurred_end = CASE WHEN s.facts > 0 THEN s.last_end ELSE u.occurred_end END,
        mentioned_at = CASE WHEN s.facts > 0 THEN s.last_said ELSE u.mentioned_at END, updated_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(updates)}::jsonb) AS ${columns} CROSS JOIN ${times}
      WHERE u.id = x.id AND u.bank_id = ${bankId} AND u.fact_type = 'observation'`
  }
  const touched = withIds.map((draft) => draft.id)
  if (Arr.isReadonlyArrayNonEmpty(touched)) {
    // The entities an observation is about: those of its facts that its text names. No `unit_seq`, so retain's
    // entity links (which walk units by seq) never link new facts to observations.
    yield* sql`DELETE FROM unit_entities WHERE unit_id IN ${sql.in(touched)}`
    yield* sql`
      INSERT INTO unit_entities (unit_id, entity_id)
      SELECT DISTINCT o.id, ue.entity_id
      FROM memory_units o
      JOIN unit_entities ue ON ue.unit_id = ANY(o.source_fact_ids)
      JOIN entities e ON e.id = ue.entity_id
      WHERE o.id IN ${sql.in(touched)} AND strpos(lower(o.text), split_part(lower(e.canonical_name), ' ', 1)) > 0
      ON CONFLICT DO NOTHING`
    const history = withIds.map((draft) => ({
      id: crypto.randomUUID(),
      observation_id: draft.id,
      change: draft.change,
      text: draft.text,
      previous_text: draft.previousText,
      source_fact_ids: draft.sourceFactIds,
      added_fact_ids: draft.addedFactIds,
      merged: draft.absorbedIds
    }))
    yield* sql`
      INSERT INTO observation_history (id, bank_id, observation_id, version, change, text, previous_text,
        source_fact_ids, added_fact_ids, merged_observation_ids, operation_id)
      SELECT x.id, ${bankId}, x.observation_id, coalesce(o.observation_version, 1), x.change, x.text, x.previous_text,
        coalesce(x.source_fact_ids, '{}'), coalesce(x.added_fact_ids, '{}'), coalesce(x.merged, '{}'), ${batch.operationId}
      FROM jsonb_to_recordset(${JSON.stringify(history)}::jsonb) AS x(id text, observation_id text, change text,
        text text, previous_text text, source_fact_ids text[], added_fact_ids text[], merged text[])
      JOIN memory_units o ON o.id = x.observation_id`
  }
  if (batch.factIds.length > 0) {
    yield* sql`UPDATE memory_units SET consolidated_at = now()
      WHERE bank_id = ${bankId} AND id IN ${sql.in([...batch.factIds])} AND fact_type IN ('world', 'experience')`
  }
  return {
    created: withIds.filter((draft) => draft.change === "created").length,
    updated: withIds.filter((draft) => draft.change === "updated").length,
    merged: withIds.filter((draft) => draft.change === "merged").length,
    removed: absorbed.length
  } satisfies WriteOutcome
})
