/**
 * The database-side retrieval strategies: semantic (HNSW nearest neighbours of the query vector), keyword
 * (full-text search, with CJK terms) and temporal (memories in a time window, nearest its middle first). Each
 * takes the request's scope (bank, types, tags) as an SQL condition and returns ranked candidates.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { param } from "../../storage/VectorParam.ts"
import { widenHnswSearch } from "../../storage/HnswSearch.ts"
import { byScoreThenId, type Candidate } from "./Candidates.ts"
import { keywordQuery } from "./SearchTerms.ts"

type Fragment = ReturnType<SqlClient.SqlClient["and"]>

export const semantic = Effect.fn("Recall.semantic")(function*(options: {
  readonly scope: Fragment
  readonly vector: Float32Array
  readonly dimensions: number
  readonly model: string
  readonly depth: number
  /** A scan of every vector in scope instead of the HNSW index: exact, for comparisons. */
  readonly exact?: boolean | undefined
}) {
  const sql = yield* SqlClient.SqlClient
  const d = sql.literal(String(Math.trunc(options.dimensions)))
  const q = param(options.vector)
  // Filtered HNSW scans stop early unless iterative scanning is on; both settings last for this transaction only.
  return yield* Effect.gen(function*() {
    if (options.exact === true) {
      yield* sql`SET LOCAL enable_indexscan = off`
      yield* sql`SET LOCAL enable_bitmapscan = off`
    }
    yield* sql`SET LOCAL hnsw.iterative_scan = relaxed_order`
    yield* widenHnswSearch(sql, options.depth * 2)
    return yield* sql<Candidate>`
      SELECT u.id, 1 - (u.embedding::vector(${d}) <=> ${q}::vector(${d})) AS score
      FROM memory_units u
      WHERE ${options.scope} AND u.embedding_model = ${options.model} AND vector_dims(u.embedding) = ${d}
      ORDER BY u.embedding::vector(${d}) <=> ${q}::vector(${d})
      LIMIT ${options.depth}`
  }).pipe(
    sql.withTransaction,
    // Equal distances come back in index order, which a restore or a rebuilt index changes; the id decides instead.
    Effect.map((rows) => [...rows].sort(byScoreThenId))
  )
})

/**
 * The query's similarity to given memories (the candidates another strategy found), scored as `semantic` scores
 * them, so the reranker weighs every candidate's meaning, not only of those the semantic strategy surfaced.
 */
export const similarities = Effect.fn("Recall.similarities")(function*(options: {
  readonly ids: ReadonlyArray<string>
  readonly vector: Float32Array
  readonly dimensions: number
  readonly model: string
}) {
  if (options.ids.length === 0) return [] as ReadonlyArray<Candidate>
  const sql = yield* SqlClient.SqlClient
  const d = sql.literal(String(Math.trunc(options.dimensions)))
  return yield* sql<Candidate>`
    SELECT u.id, 1 - (u.embedding::vector(${d}) <=> ${param(options.vector)}::vector(${d})) AS score
    FROM memory_units u
    WHERE u.id IN ${sql.in(options.ids)} AND u.embedding_model = ${options.model} AND vector_dims(u.embedding) = ${d}`
})

/**
 * BM25 over the full-text index: the query's lexemes (stemmed by PostgreSQL's `english` configuration, CJK
 * terms by `simple`), each weighted by its inverse document frequency in the bank, a memory's score normalised
 * by its length (k1 1.2, b 0.75; a term counts once per memory, which suits short facts). Expansion terms
 * (related words) count with a lower weight.
 */
/** Document frequencies are counted up to this many memories. */
const dfCap = 2000

export const keyword = Effect.fn("Recall.keyword")(function*(options: {
  readonly scope: Fragment
  readonly bankId: string
  readonly query: string
  readonly expansion?: ReadonlyArray<string> | undefined
  readonly expansionWeight?: number | undefined
  readonly depth: number
  /** Memories in the bank and their average full-text length (cached by the caller: reading them scans the bank). */
  readonly corpus: { readonly count: number; readonly averageLength: number }
}) {
  const sql = yield* SqlClient.SqlClient
  const { cjk } = keywordQuery(options.query)
  const cjkList = cjk === "" ? [] : cjk.split(" | ")
  const expansion = (options.expansion ?? []).join(" ")
  if (options.query.trim() === "") return [] as ReadonlyArray<Candidate>
  return yield* sql<Candidate>`
    WITH stats AS (
      SELECT ${options.corpus.count}::float8 AS n, ${Math.max(1, options.corpus.averageLength)}::float8 AS avglen
    ),
    raw AS (
      SELECT plainto_tsquery('simple', lexeme) AS q, 1.0::float8 AS boost
        FROM unnest(tsvector_to_array(to_tsvector('english', ${options.query}))) AS lexeme
      UNION ALL
      SELECT plainto_tsquery('simple', term), 1.0::float8 FROM unnest(${cjkList}::text[]) AS term
      UNION ALL
      SELECT plainto_tsquery('simple', lexeme), ${options.expansionWeight ?? 0.3}::float8
        FROM unnest(tsvector_to_array(to_tsvector('english', ${expansion}))) AS lexeme
        WHERE lexeme NOT IN (SELECT unnest(tsvector_to_array(to_tsvector('english', ${options.query}))))
    ),
    -- A word found by both configurations (a CJK run is also one "english" word) counts once.
    distinct_terms AS (SELECT q, max(boost) AS boost FROM raw GROUP BY q),
    terms AS (
      SELECT r.q, r.boost * ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5)) AS idf
      FROM distinct_terms r, stats s,
        -- Counting stops at a cap: past it a term is common and its weight barely changes, and exact counts of
        -- common terms would cost a scan of most of the bank on every query.
        LATERAL (SELECT count(*)::float8 AS df FROM (SELECT 1 FROM memory_units m
                 WHERE m.bank_id = ${options.bankId} AND m.search_text @@ r.q LIMIT ${dfCap}) c) d
      WHERE d.df > 0
    )
    SELECT u.id, sum(t.idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * length(u.search_text) / s.avglen))) AS score
    FROM memory_units u JOIN terms t ON u.search_text @@ t.q, stats s
    WHERE ${options.scope}
    GROUP BY u.id
    ORDER BY score DESC, u.id
    LIMIT ${options.depth}`
})

export const temporal = Effect.fn("Recall.temporal")(function*(options: {
  readonly scope: Fragment
  readonly start: Date
  readonly end: Date
  readonly depth: number
}) {
  const sql = yield* SqlClient.SqlClient
  const middle = new Date((options.start.getTime() + options.end.getTime()) / 2)
  const halfSpan = Math.max(1, (options.end.getTime() - options.start.getTime()) / 2000)
  return yield* sql<Candidate>`
    SELECT u.id,
      1.0 / (1 + abs(extract(epoch FROM coalesce(u.occurred_start, u.mentioned_at) - ${middle.toISOString()}::timestamptz))
        / ${halfSpan}) AS score
    FROM memory_units u
    WHERE ${options.scope}
      AND coalesce(u.occurred_start, u.mentioned_at) <= ${options.end.toISOString()}::timestamptz
      AND coalesce(u.occurred_end, u.occurred_start, u.mentioned_at) >= ${options.start.toISOString()}::timestamptz
      -- The same overlap as a range, written exactly as the GiST index memory_units_span is, so it can be used.
      AND tstzrange(
            least(coalesce(u.occurred_start, u.mentioned_at), coalesce(u.occurred_end, u.occurred_start, u.mentioned_at)),
            greatest(coalesce(u.occurred_start, u.mentioned_at), coalesce(u.occurred_end, u.occurred_start, u.mentioned_at)),
            '[]')
        && tstzrange(${options.start.toISOString()}::timestamptz, ${options.end.toISOString()}::timestamptz, '[]')
    ORDER BY score DESC, u.seq DESC
    LIMIT ${options.depth}`
})

/** The bank's size and average full-text length for BM25; a scan of the bank, so callers cache it. */
export const corpusStatistics = Effect.fn("Recall.corpusStatistics")(function*(bankId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ count: number; averageLength: number }>`
    SELECT count(*)::int AS count, coalesce(avg(length(search_text)), 1)::float8 AS average_length
    FROM memory_units WHERE bank_id = ${bankId}`
  return rows[0] ?? { count: 0, averageLength: 1 }
})
