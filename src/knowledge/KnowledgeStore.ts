/**
 * The knowledge_nodes table, read together with each page's mental model (name, query, tags, body, refresh time).
 * SQL only: the rules of the tree (parents, cycles, page-only options) are in `KnowledgeBase`, which calls this
 * inside its per-bank lock.
 */
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { keywordQuery } from "../memory/recall/SearchTerms.ts"
import { KnowledgeNodeKind } from "../domain/KnowledgeBase.ts"

const NodeRow = Schema.Struct({
  id: Schema.String,
  kind: KnowledgeNodeKind,
  name: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  mentalModelId: Schema.NullOr(Schema.String),
  managed: Schema.Boolean,
  createdAt: Schema.Date,
  updatedAt: Schema.Date,
  sourceQuery: Schema.NullOr(Schema.String),
  tags: Schema.NullOr(Schema.Array(Schema.String)),
  content: Schema.NullOr(Schema.String),
  lastRefreshedAt: Schema.NullOr(Schema.Date),
  modelCreatedAt: Schema.NullOr(Schema.Date)
})
export type NodeRow = typeof NodeRow.Type
const decodeNodes = Schema.decodeUnknownEffect(Schema.Array(NodeRow))

const SearchRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mentalModelId: Schema.String,
  sourceQuery: Schema.String,
  content: Schema.String,
  score: Schema.Number,
  total: Schema.Number,
  updatedAt: Schema.Date
})
export type SearchRow = typeof SearchRow.Type
const decodeSearch = Schema.decodeUnknownEffect(Schema.Array(SearchRow))

const HistoryRow = Schema.Struct({
  mentalModelId: Schema.String,
  reason: Schema.String,
  mode: Schema.String,
  changed: Schema.Boolean,
  sourceQuery: Schema.String,
  createdAt: Schema.Date
})
export type HistoryRow = typeof HistoryRow.Type
const decodeHistory = Schema.decodeUnknownEffect(Schema.Array(HistoryRow))

export interface NewNode {
  readonly id: string
  readonly bankId: string
  readonly kind: KnowledgeNodeKind
  readonly name: string
  readonly parentId: string | null
  readonly mentalModelId: string | null
}

export const makeKnowledgeStore = (sql: SqlClient.SqlClient) => {
  const orDie = <A>(effect: Effect.Effect<A, unknown>) => Effect.orDie(effect)
  const nodeColumns = sql`n.id, n.kind, n.name, n.parent_id, n.mental_model_id, n.managed, n.created_at, n.updated_at,
    m.source_query, m.tags, m.content, m.last_refreshed_at, m.created_at AS model_created_at
    FROM knowledge_nodes n
    LEFT JOIN mental_models m ON m.bank_id = n.bank_id AND m.id = n.mental_model_id`

  return {
    /**
     * Serialises the bank's tree changes (on every database, across cluster nodes) until the transaction ends, so two
     * concurrent moves cannot build a cycle between them.
     */
    lock: (bankId: string) => orDie(sql`SELECT pg_advisory_xact_lock(hashtext(${`engram.knowledge:${bankId}`}))`),

    nodes: (bankId: string) =>
      orDie(sql`SELECT ${nodeColumns} WHERE n.bank_id = ${bankId}`.pipe(Effect.flatMap(decodeNodes))),

    node: (bankId: string, id: string) =>
      orDie(sql`SELECT ${nodeColumns} WHERE n.bank_id = ${bankId} AND n.id = ${id}`.pipe(
        Effect.flatMap(decodeNodes),
        Effect.map((rows) => rows[0])
      )),

    insert: (node: NewNode) => orDie(sql`INSERT INTO knowledge_nodes ${sql.insert({ ...node })}`),

    update: (
      bankId: string,
      id: string,
      changes: { readonly name: string; readonly parentId: string | null; readonly now: Date }
    ) =>
      orDie(
        sql`UPDATE knowledge_nodes SET ${
          sql.update({ name: changes.name, parentId: changes.parentId, updatedAt: changes.now })
        } WHERE bank_id = ${bankId} AND id = ${id}`
      ),

    /** Deletes the nodes and the pages' mental models (whose deletion would cascade to their nodes anyway). */
    remove: (bankId: string, ids: ReadonlyArray<string>, modelIds: ReadonlyArray<string>) =>
      orDie(Effect.gen(function*() {
        if (modelIds.length > 0) {
          yield* sql`DELETE FROM mental_models WHERE bank_id = ${bankId} AND id IN ${sql.in([...modelIds])}`
        }
        yield* sql`DELETE FROM knowledge_nodes WHERE bank_id = ${bankId} AND id IN ${sql.in([...ids])}`
      })),

    /**
     * When the bank last gained a memory: the newest `created_at` of each fact type (four backward scans of the
     * `(bank_id, fact_type, created_at)` index, never a scan of the bank).
     */
    lastWrite: (bankId: string) =>
      orDie(sql<{ lastWrite: Date | null }>`SELECT GREATEST(
          (SELECT max(created_at) FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'world'),
          (SELECT max(created_at) FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'experience'),
          (SELECT max(created_at) FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'observation'),
          (SELECT max(created_at) FROM memory_units WHERE bank_id = ${bankId} AND fact_type = 'opinion')
        ) AS last_write`.pipe(Effect.map((rows) => rows[0]?.lastWrite ?? null))),

    /**
     * Pages ranked by PostgreSQL full text over name (weight A), source query (B) and body (C), with a bonus when
     * the whole query appears in the name or the text (which also finds words the English parser splits
     * differently, and CJK). Only letters and digits reach `to_tsquery` (see `keywordQuery`).
     */
    search: (bankId: string, query: string, limit: number) => {
      const { english } = keywordQuery(query)
      const needle = query.trim().toLowerCase()
      const tsquery = english === "" ? sql`NULL::tsquery` : sql`to_tsquery('english', ${english})`
      return orDie(sql`
        WITH q AS (SELECT ${tsquery} AS query),
        pages AS (
          SELECT n.id, n.name, n.mental_model_id, m.source_query, m.content,
            GREATEST(n.updated_at, m.updated_at, coalesce(m.last_refreshed_at, m.created_at)) AS updated_at,
            setweight(to_tsvector('english', n.name), 'A') || setweight(to_tsvector('english', m.source_query), 'B') ||
              setweight(to_tsvector('english', m.content), 'C') AS document
          FROM knowledge_nodes n JOIN mental_models m ON m.bank_id = n.bank_id AND m.id = n.mental_model_id
          WHERE n.bank_id = ${bankId} AND n.kind = 'page'),
        scored AS (
          SELECT p.*, coalesce(ts_rank_cd(p.document, q.query), 0)
            + CASE WHEN strpos(lower(p.name), ${needle}) > 0 THEN 1.0 ELSE 0 END
            + CASE WHEN strpos(lower(p.source_query || ' ' || p.content), ${needle}) > 0 THEN 0.5 ELSE 0 END AS score
          FROM pages p, q
          WHERE (q.query IS NOT NULL AND p.document @@ q.query)
            OR strpos(lower(p.name || ' ' || p.source_query || ' ' || p.content), ${needle}) > 0)
        SELECT id, name, mental_model_id, source_query, content, score::float8 AS score, updated_at,
          (count(*) OVER ())::int AS total
        FROM scored ORDER BY score DESC, lower(name), id LIMIT ${limit}`.pipe(Effect.flatMap(decodeSearch)))
    },

    /** Every build of the given pages' models, oldest first. */
    history: (bankId: string, modelIds: ReadonlyArray<string>) =>
      modelIds.length === 0 ? Effect.succeed([]) : orDie(sql`
        SELECT mental_model_id, reason, mode, changed, source_query, created_at FROM mental_model_refreshes
        WHERE bank_id = ${bankId} AND mental_model_id IN ${sql.in([...modelIds])}
        ORDER BY created_at, id`.pipe(Effect.flatMap(decodeHistory)))
  }
}

export type KnowledgeStore = ReturnType<typeof makeKnowledgeStore>
