/**
 * The temporal, semantic, entity and causal links recall walks, written for new memories in one INSERT per batch.
 * Retain already knows each new memory's nearest stored neighbours (its near-duplicate search returns them) and
 * holds the batch's vectors, so its semantic links need no second vector search; single-memory edits search in SQL.
 * Both ends of every link are selected from `memory_units` in the same statement: no foreign key checks them
 * (migration 0035), so nothing here may insert a link to a memory that does not exist.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { cosine } from "../Cosine.ts"
import { widenHnswSearch } from "../../storage/HnswSearch.ts"
import type { CausalRelation } from "./ExtractedFact.ts"

/** Link bounds: enough neighbours for spreading activation, few enough to keep the graph sparse. */
export const linkPolicy = {
  temporalNeighbours: 4,
  temporalWindowDays: 3,
  semanticNeighbours: 5,
  semanticThreshold: 0.6,
  entityNeighbours: 4,
  nearDuplicateSimilarity: 0.97,
  nearDuplicateWordOverlap: 0.8
}

type Dims = ReturnType<SqlClient.SqlClient["literal"]>

/** A link computed before the INSERT (semantic or causal); its target is checked to exist when it is written. */
export interface PlannedLink {
  readonly fromId: string
  readonly toId: string
  readonly linkType: string
  readonly weight: number
}

/** A new memory's vector and its nearest stored memories (from the near-duplicate search), best first. */
export interface SemanticCandidates {
  readonly id: string
  readonly embedding: Float32Array
  readonly stored: ReadonlyArray<{ readonly id: string; readonly similarity: number }>
}

/**
 * Each new memory's semantic links: its `semanticNeighbours` most similar memories, stored or in the same batch
 * (compared here, exactly), at `semanticThreshold` or above — what one vector search after the insert found.
 */
export const semanticLinks = (batch: ReadonlyArray<SemanticCandidates>): Array<PlannedLink> =>
  batch.flatMap((memory) =>
    [
      ...memory.stored,
      ...batch.filter((other) => other.id !== memory.id).map((other) => ({
        id: other.id,
        similarity: cosine(memory.embedding, other.embedding)
      }))
    ]
      .filter((candidate) => candidate.similarity >= linkPolicy.semanticThreshold)
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, linkPolicy.semanticNeighbours)
      .map((candidate) => ({
        fromId: memory.id,
        toId: candidate.id,
        linkType: "semantic",
        weight: candidate.similarity
      }))
  )

export const causalLinks = (
  facts: ReadonlyArray<
    {
      readonly id: string
      readonly causes: ReadonlyArray<{ readonly targetId: string; readonly relation: CausalRelation }>
    }
  >
): Array<PlannedLink> =>
  facts.flatMap((fact) =>
    fact.causes.map((cause) => ({ fromId: fact.id, toId: cause.targetId, linkType: cause.relation, weight: 1 }))
  )

/**
 * Temporal closeness is when things were said (then when they happened): neighbouring turns of a conversation,
 * read backwards along (time said, seq), so the index walk stops after a few rows however large the bank is.
 */
const temporal = (sql: SqlClient.SqlClient, bankId: string, ids: ReadonlyArray<string>) =>
  sql`
  SELECT u.id AS from_id, n.id AS to_id, 'temporal' AS link_type,
    ((1.0 / (1 + abs(n.seq - u.seq))) * exp(-extract(epoch FROM coalesce(u.mentioned_at, u.occurred_start) - n.said) / 86400.0))::real AS weight
  FROM memory_units u
  CROSS JOIN LATERAL (
    SELECT o.id, o.seq, coalesce(o.mentioned_at, o.occurred_start) AS said
    FROM memory_units o
    WHERE o.bank_id = ${bankId}
      AND (coalesce(o.mentioned_at, o.occurred_start), o.seq) < (coalesce(u.mentioned_at, u.occurred_start), u.seq)
      AND coalesce(o.mentioned_at, o.occurred_start)
        >= coalesce(u.mentioned_at, u.occurred_start) - make_interval(days => ${linkPolicy.temporalWindowDays})
    ORDER BY coalesce(o.mentioned_at, o.occurred_start) DESC, o.seq DESC
    LIMIT ${linkPolicy.temporalNeighbours}) n
  WHERE u.id IN ${sql.in(ids)} AND coalesce(u.mentioned_at, u.occurred_start) IS NOT NULL`

/** For each entity of a new memory, its most recent earlier memories, read from the (entity, seq) index. */
const entity = (sql: SqlClient.SqlClient, ids: ReadonlyArray<string>) =>
  sql`
  SELECT DISTINCT mine.unit_id AS from_id, n.unit_id AS to_id, 'entity' AS link_type, 1::real AS weight
  FROM unit_entities mine
  CROSS JOIN LATERAL (
    SELECT theirs.unit_id FROM unit_entities theirs
    WHERE theirs.entity_id = mine.entity_id AND theirs.unit_seq < mine.unit_seq
    ORDER BY theirs.unit_seq DESC
    LIMIT ${linkPolicy.entityNeighbours}) n
  WHERE mine.unit_id IN ${sql.in(ids)}`

/** Each new memory's nearest memories by vector, searched in SQL (for a memory written alone). */
const semanticSearched = (
  sql: SqlClient.SqlClient,
  bankId: string,
  ids: ReadonlyArray<string>,
  embeddingModel: string,
  dims: Dims
) =>
  sql`
  SELECT u.id AS from_id, n.id AS to_id, 'semantic' AS link_type, n.similarity::real AS weight
  FROM memory_units u
  CROSS JOIN LATERAL (
    SELECT o.id, 1 - (o.embedding::vector(${dims}) <=> u.embedding::vector(${dims})) AS similarity
    FROM memory_units o
    WHERE o.bank_id = ${bankId} AND o.id <> u.id AND o.embedding_model = ${embeddingModel}
      AND vector_dims(o.embedding) = ${dims}
    ORDER BY o.embedding::vector(${dims}) <=> u.embedding::vector(${dims})
    LIMIT ${linkPolicy.semanticNeighbours}) n
  WHERE u.id IN ${
    sql.in(ids)
  } AND vector_dims(u.embedding) = ${dims} AND n.similarity >= ${linkPolicy.semanticThreshold}
    AND NOT EXISTS (SELECT 1 FROM memory_links l WHERE l.from_id = n.id AND l.to_id = u.id AND l.link_type = 'semantic')`

/** Planned links whose both ends exist (a causal target may have been a duplicate that was not stored). */
const planned = (sql: SqlClient.SqlClient, links: ReadonlyArray<PlannedLink>) =>
  sql`
  SELECT x.from_id, x.to_id, x.link_type, x.weight
  FROM jsonb_to_recordset(${
    JSON.stringify(links.map((link) => ({
      from_id: link.fromId,
      to_id: link.toId,
      link_type: link.linkType,
      weight: link.weight
    })))
  }::jsonb) AS x(from_id text, to_id text, link_type text, weight real)
  WHERE EXISTS (SELECT 1 FROM memory_units f WHERE f.id = x.from_id)
    AND EXISTS (SELECT 1 FROM memory_units t WHERE t.id = x.to_id)`

const insertLinks = (
  sql: SqlClient.SqlClient,
  bankId: string,
  sources: ReadonlyArray<ReturnType<typeof temporal>>,
  onConflict: "ignore" | "none" = "ignore"
) =>
  sql`
  INSERT INTO memory_links (bank_id, from_id, to_id, link_type, weight)
  SELECT ${bankId}, l.from_id, l.to_id, l.link_type, l.weight
  FROM (${sql.join(" UNION ALL ", false)(sources.map((source) => sql`(${source})`))}) l
  ${onConflict === "ignore" ? sql`ON CONFLICT DO NOTHING` : sql``}`

/** Planned links once each: the same cause named twice by an extractor is one link. */
const distinctLinks = (
  links: ReadonlyArray<PlannedLink>
) => [...new Map(links.map((link) => [`${link.fromId}\u0000${link.toId}\u0000${link.linkType}`, link])).values()]

/**
 * Links a retained batch's new memories: temporal and entity links found in SQL, semantic and causal ones planned.
 * Every link starts at a memory this batch just created, so none can exist already, and each source yields a
 * (from, to, type) once (temporal and entity neighbours are distinct rows, planned links are deduplicated here): the
 * INSERT needs no ON CONFLICT, whose speculative insertion doubled the cost of a link (2,000 links: 41-82 ms
 * without against 83-151 ms with, four alternating runs).
 */
export const linkBatch = Effect.fnUntraced(function*(
  bankId: string,
  ids: ReadonlyArray<string>,
  links: ReadonlyArray<PlannedLink>
) {
  if (ids.length === 0) return
  const sql = yield* SqlClient.SqlClient
  const fresh = new Set(ids)
  const plannedLinks = distinctLinks(links)
  // A planned link from a memory not created here could already exist: those keep the conflict check.
  const conflictFree = plannedLinks.every((link) => fresh.has(link.fromId))
  yield* insertLinks(sql, bankId, [
    temporal(sql, bankId, ids),
    entity(sql, ids),
    ...(plannedLinks.length === 0 ? [] : [planned(sql, plannedLinks)])
  ], conflictFree ? "none" : "ignore")
})

/** Links memories written one at a time (an edit, a restore): every kind found in SQL. */
export const linkNew = Effect.fnUntraced(function*(
  bankId: string,
  ids: ReadonlyArray<string>,
  embeddingModel: string,
  dims: Dims
) {
  if (ids.length === 0) return
  const sql = yield* SqlClient.SqlClient
  yield* widenHnswSearch(sql)
  yield* insertLinks(sql, bankId, [
    temporal(sql, bankId, ids),
    semanticSearched(sql, bankId, ids, embeddingModel, dims),
    entity(sql, ids)
  ])
})
