/**
 * Writes one prepared retain batch in a single short transaction: document replacement, chunks, deduplication
 * against what the bank already holds, memory units with their vectors and full-text index, entities, and the
 * temporal, semantic, entity and causal links recall walks. Everything here is idempotent for a re-run of the
 * same batch: facts already stored (by content, or as a near-duplicate) are skipped, never doubled.
 */
import { Array as Arr, Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { param } from "../../storage/VectorParam.ts"
import type { CausalRelation, ExtractedEntity } from "./ExtractedFact.ts"
import { cjkTerms } from "../recall/SearchTerms.ts"
import { resolveEntities } from "./EntityResolver.ts"
import { linkMentions } from "./EntityMentions.ts"
import { sameNumbers, wordJaccard } from "./ContentHash.ts"
import { isoOrNull as iso } from "../../domain/IsoTime.ts"
import { pruneUnnamedEntities } from "../forgetting/DerivedDeletion.ts"
import { causalLinks, linkBatch, linkPolicy, semanticLinks } from "./MemoryLinks.ts"
import { hnswSearchWidened } from "../../storage/HnswSearch.ts"
import { bankPositionColumns, type HeldVectors, samePosition } from "../../brain/HeldVectors.ts"

/**
 * Stored memories returned per new fact by the nearest-neighbour search: its semantic links take the best
 * `semanticNeighbours`, and a few more leave room for the nearest fact when observations crowd the top.
 */
const nearestSearched = linkPolicy.semanticNeighbours + 5

export interface PreparedFact {
  readonly id: string
  readonly text: string
  readonly factType: "world" | "experience"
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly mentionedAt: Date | null
  readonly context: string | null
  readonly documentId: string | null
  readonly chunkId: string | null
  readonly metadata: Record<string, string>
  readonly tags: ReadonlyArray<string>
  readonly observationScopes: unknown
  readonly contentHash: string
  readonly embedding: Float32Array
  readonly entities: ReadonlyArray<ExtractedEntity>
  readonly causes: ReadonlyArray<{ readonly targetId: string; readonly relation: CausalRelation }>
  readonly itemIndex: number
  readonly factIndex: number
  /** When the fact is forgotten (the item's `expires_at`); absent or null: never. */
  readonly expiresAt?: Date | null
  /** The operation that queued it, where a group commit merged several retains' batches; absent: the batch's. */
  readonly operationId?: string | null
}

export interface PreparedChunk {
  readonly id: string
  readonly documentId: string | null
  readonly chunkIndex: number
  readonly text: string
  readonly hash: string
  /** As `PreparedFact.operationId`. */
  readonly operationId?: string | null
}

export interface PreparedDocument {
  readonly documentId: string
  readonly replace: boolean
  readonly metadata: Record<string, string>
  readonly tags: ReadonlyArray<string>
  readonly context: string | null
  readonly originalText: string
  /** Chunks of the old version that reappear unchanged: their memories are kept instead of re-extracted. */
  readonly keptChunkIds: ReadonlyArray<string>
}

export interface WriteBatch {
  readonly bankId: string
  readonly operationId: string | null
  readonly embeddingModel: string
  readonly dimensions: number
  readonly documents: ReadonlyArray<PreparedDocument>
  readonly chunks: ReadonlyArray<PreparedChunk>
  readonly facts: ReadonlyArray<PreparedFact>
}

export interface WriteResult {
  readonly created: ReadonlyArray<string>
  readonly duplicates: number
  /** Causal links the batch asked for (some may not have been stored: their targets were duplicates). */
  readonly causalLinks: number
}

/**
 * Removes a replaced document's old memories with everything derived from them, in the batch's transaction
 * (`MemoryRemoval.session(bankId, "replace").remove`); answers the entities they named.
 */
export type RemoveReplaced = (
  ids: ReadonlyArray<string>
) => Effect.Effect<{ readonly namedEntityIds: ReadonlyArray<string> }, SqlError, SqlClient.SqlClient>

/**
 * Writes the batch. A document in replace mode first loses its old memories (but those of chunks that reappear
 * unchanged) through `removeReplaced`, with everything derived from them, as a delete would take them: opinions,
 * observations, mental models (emptied), dream evidence, anomalies, trajectories, stats counts. The entities they
 * named and nothing names any more after the new facts are written are pruned last, so an entity the new text names
 * again keeps its id.
 */
export const writeBatch = Effect.fn("MemoryWriter.writeBatch")(function*(
  batch: WriteBatch,
  removeReplaced?: RemoveReplaced,
  /** The bank's brain's vectors, searched instead of the HNSW index when it stands where the tables do. */
  held?: HeldVectors
) {
  const sql = yield* SqlClient.SqlClient
  const { bankId } = batch
  const named = new Set<string>()

  for (const document of batch.documents) {
    if (document.replace) {
      const kept = document.keptChunkIds
      const replaced = yield* sql<{ id: string }>`SELECT id FROM memory_units
        WHERE bank_id = ${bankId} AND document_id = ${document.documentId} AND fact_type IN ('world', 'experience')
        ${kept.length > 0 ? sql`AND (chunk_id IS NULL OR chunk_id NOT IN ${sql.in(kept)})` : sql``}`
      if (replaced.length > 0) {
        if (removeReplaced === undefined) {
          return yield* Effect.die(new Error("writeBatch: a document replaced without removeReplaced"))
        }
        const removed = yield* removeReplaced(replaced.map((row) => row.id))
        for (const id of removed.namedEntityIds) named.add(id)
      }
      yield* sql`DELETE FROM chunks WHERE bank_id = ${bankId} AND document_id = ${document.documentId}
        ${kept.length > 0 ? sql`AND id NOT IN ${sql.in(kept)}` : sql``}`
    }
    const row = {
      bankId,
      documentId: document.documentId,
      metadata: JSON.stringify(document.metadata),
      tags: document.tags,
      context: document.context,
      originalText: document.originalText
    }
    yield* document.replace
      ? sql`INSERT INTO documents ${sql.insert(row)}
          ON CONFLICT (bank_id, document_id) DO UPDATE SET metadata = excluded.metadata, tags = excluded.tags,
            context = excluded.context, original_text = excluded.original_text, updated_at = now(), retained_at = now()`
      : sql`INSERT INTO documents ${sql.insert(row)}
          ON CONFLICT (bank_id, document_id) DO UPDATE SET
            metadata = documents.metadata || excluded.metadata,
            tags = ARRAY(SELECT DISTINCT unnest(documents.tags || excluded.tags)),
            original_text = coalesce(documents.original_text || E'\\n\\n', '') || excluded.original_text,
            updated_at = now(), retained_at = now()`
  }

  // A replaced document's memories are gone in this transaction but still in the brain: search the tables then.
  const replaced = batch.documents.some((document) => document.replace)
  const written = yield* writeFacts(batch, replaced ? undefined : held)
  if (named.size > 0) {
    const pruned = yield* pruneUnnamedEntities(bankId, [...named])
    // The bank's entity map is built from every entity: one gone drops it (recomputed when next requested).
    if (pruned > 0) yield* sql`DELETE FROM entity_intelligence WHERE bank_id = ${bankId}`
  }
  return written
})

type NearestRow = {
  readonly idx: number
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly similarity: number
}

/**
 * Each fact's `nearestSearched` nearest stored memories from the bank's brain, in slices that let requests in between
 * (a search of a big bank's index takes a fraction of a millisecond; a hundred of them in one piece would hold the
 * event loop); none when the brain moved meanwhile (the caller then asks the tables).
 */
const nearestInBrain = Effect.fnUntraced(function*(held: HeldVectors, facts: ReadonlyArray<PreparedFact>) {
  const rows: Array<NearestRow> = []
  for (let idx = 0; idx < facts.length; idx++) {
    if (idx > 0 && idx % brainSearchesPerSlice === 0) yield* Effect.yieldNow
    const found = held.nearest(facts[idx]!.embedding, nearestSearched)
    if (found === undefined) return undefined
    for (const neighbour of found) rows.push({ idx, ...neighbour })
  }
  return rows
})

const brainSearchesPerSlice = 16

/**
 * The same from the tables' HNSW index, in the transaction. The probes are typed as `vector` in the record set, so
 * each is parsed once rather than at every comparison.
 */
const nearestInTables = Effect.fnUntraced(function*(batch: WriteBatch, facts: ReadonlyArray<PreparedFact>) {
  if (facts.length === 0) return []
  const sql = yield* SqlClient.SqlClient
  const { bankId } = batch
  // The dimension is a trusted integer from the embedder; it must be literal for the partial HNSW index to apply.
  const dims = sql.literal(String(Math.trunc(batch.dimensions)))
  const probe = JSON.stringify(facts.map((fact, index) => ({ idx: index, embedding: param(fact.embedding) })))
  return yield* sql<NearestRow>`
    SELECT x.idx, n.id, n.text, n.fact_type, n.similarity
    FROM jsonb_to_recordset(${probe}::jsonb) AS x(idx int, embedding vector)
    CROSS JOIN LATERAL (
      SELECT u.id, u.text, u.fact_type, 1 - (u.embedding::vector(${dims}) <=> x.embedding) AS similarity
      FROM memory_units u
      WHERE u.bank_id = ${bankId} AND u.embedding_model = ${batch.embeddingModel}
        AND vector_dims(u.embedding) = ${dims}
        -- An expired memory is neither a duplicate nor a link target, even before the sweep deletes it.
        AND (u.expires_at IS NULL OR u.expires_at > now())
      ORDER BY u.embedding::vector(${dims}) <=> x.embedding
      LIMIT ${nearestSearched}) n`
})

/** The batch's chunks, memories, entities and links (its documents are written first). */
const writeFacts = Effect.fnUntraced(function*(batch: WriteBatch, held: HeldVectors | undefined) {
  const sql = yield* SqlClient.SqlClient
  const { bankId } = batch
  const chunkRows: ReadonlyArray<Record<string, unknown>> = batch.chunks.map((chunk) => ({
    id: chunk.id,
    bankId,
    documentId: chunk.documentId,
    chunkIndex: chunk.chunkIndex,
    text: chunk.text,
    contentHash: chunk.hash,
    operationId: chunk.operationId !== undefined ? chunk.operationId : batch.operationId
  }))
  if (Arr.isReadonlyArrayNonEmpty(chunkRows)) {
    yield* sql`INSERT INTO chunks ${sql.insert(chunkRows)} ON CONFLICT DO NOTHING`
  }

  // Deduplicate: the same statement (by normalised content) or a close rewording of one already stored.
  // An expired memory the sweep has not reached yet is already gone for every read: it makes nothing a duplicate.
  const hashes = [...new Set(batch.facts.map((fact) => fact.contentHash))]
  // The same statement widens the HNSW search below for the rest of the transaction (one turn less).
  // With the brain's vectors lent, it also reads where the bank's writes stand, to compare with the brain.
  const [existing] = hashes.length === 0 ? [] : yield* sql<
    { hashes: ReadonlyArray<string>; widened: string; seqMark?: number; changeMark?: number }
  >`
    SELECT ARRAY(
        SELECT content_hash FROM memory_units WHERE bank_id = ${bankId} AND content_hash IN ${sql.in(hashes)}
          AND (expires_at IS NULL OR expires_at > now())) AS hashes,
      ${hnswSearchWidened(sql)} AS widened${held === undefined ? sql`` : sql`, ${bankPositionColumns(sql, bankId)}`}`
  const seen = new Set(existing?.hashes ?? [])
  const unique = batch.facts.filter((fact) => {
    if (seen.has(fact.contentHash)) return false
    seen.add(fact.contentHash)
    return true
  })
  // One vector search per new fact serves both the near-duplicate check (the nearest stored fact) and the fact's
  // semantic links (its nearest stored memories of any type); the search costs the same for a few more rows.
  const inBrain = held !== undefined && existing?.seqMark !== undefined && existing.changeMark !== undefined &&
      samePosition(held, { seqMark: existing.seqMark, changeMark: existing.changeMark })
    ? yield* nearestInBrain(held, unique)
    : undefined
  const nearest = inBrain ?? (yield* nearestInTables(batch, unique))
  const nearestOf = Map.groupBy(nearest, (row) => row.idx)
  const nearDuplicates = new Set(
    unique.flatMap((fact, idx) => {
      // Only facts make a new fact redundant: an observation restating it must not swallow it.
      const row = nearestOf.get(idx)?.find((row) => row.factType === "world" || row.factType === "experience")
      return row !== undefined &&
          row.similarity >= linkPolicy.nearDuplicateSimilarity &&
          wordJaccard(row.text, fact.text) >= linkPolicy.nearDuplicateWordOverlap &&
          sameNumbers(row.text, fact.text)
        ? [idx]
        : []
    })
  )
  const freshIndexes = unique.flatMap((_, index) => nearDuplicates.has(index) ? [] : [index])
  const fresh = freshIndexes.map((index) => unique[index]!)
  const duplicates = batch.facts.length - fresh.length
  if (fresh.length === 0) return { created: [], duplicates, causalLinks: 0 } satisfies WriteResult

  const units = fresh.map((fact) => ({
    id: fact.id,
    text: fact.text,
    fact_type: fact.factType,
    context: fact.context,
    occurred_start: iso(fact.occurredStart),
    occurred_end: iso(fact.occurredEnd),
    mentioned_at: iso(fact.mentionedAt),
    document_id: fact.documentId,
    chunk_id: fact.chunkId,
    metadata: fact.metadata,
    tags: fact.tags,
    observation_scopes: fact.observationScopes ?? null,
    content_hash: fact.contentHash,
    embedding: param(fact.embedding),
    cjk: cjkTerms(fact.text),
    item_index: fact.itemIndex,
    fact_index: fact.factIndex,
    expires_at: iso(fact.expiresAt ?? null),
    operation_id: fact.operationId !== undefined ? fact.operationId : batch.operationId
  }))
  yield* sql`
    INSERT INTO memory_units (id, bank_id, text, fact_type, context, occurred_start, occurred_end, mentioned_at,
      document_id, chunk_id, metadata, tags, observation_scopes, content_hash, embedding, embedding_model,
      search_text, operation_id, item_index, fact_index, expires_at)
    SELECT x.id, ${bankId}, x.text, x.fact_type, x.context, x.occurred_start, x.occurred_end, x.mentioned_at,
      x.document_id, x.chunk_id, coalesce(x.metadata, '{}'::jsonb), coalesce(x.tags, '{}'), x.observation_scopes,
      x.content_hash, x.embedding::vector, ${batch.embeddingModel},
      to_tsvector('english', x.text) || to_tsvector('simple', x.cjk), x.operation_id, x.item_index, x.fact_index,
      x.expires_at
    FROM jsonb_to_recordset(${JSON.stringify(units)}::jsonb) AS x(id text, text text, fact_type text, context text,
      occurred_start timestamptz, occurred_end timestamptz, mentioned_at timestamptz, document_id text,
      chunk_id text, metadata jsonb, tags text[], observation_scopes jsonb, content_hash text, embedding text,
      cjk text, item_index int, fact_index int, expires_at timestamptz, operation_id text)`

  // Entities: resolve every mention, then attach units to them (adding to the entities' mention counts).
  const lookup = yield* resolveEntities(bankId, fresh.flatMap((fact) => fact.entities))
  yield* linkMentions(
    fresh.flatMap((fact) =>
      [...new Set(fact.entities.map((entity) => lookup(entity.name)).filter((id) => id !== undefined))]
        .map((entityId) => ({ unitId: fact.id, entityId }))
    )
  )

  const ids = fresh.map((fact) => fact.id)
  const causal = causalLinks(fresh)
  yield* linkBatch(bankId, ids, [
    ...semanticLinks(freshIndexes.map((index) => ({
      id: unique[index]!.id,
      embedding: unique[index]!.embedding,
      stored: nearestOf.get(index) ?? []
    }))),
    ...causal
  ])
  return { created: ids, duplicates, causalLinks: causal.length } satisfies WriteResult
})
