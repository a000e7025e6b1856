/**
 * How many candidates an HNSW search of `memory_units` looks at (`hnsw.ef_search`; pgvector's default is 40). The
 * index's graph is kept small so that every insertion is cheap (`layers/storage/EmbeddingIndex.ts`, m 8), and a
 * search this wide makes up for it: 0.993 of the true top 10 at 50k memories (`bench/hnsw-quality.ts`).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

export const hnswSearchBreadth = 80

/**
 * The expression that sets the breadth for the rest of the caller's transaction (at least `hnswSearchBreadth`), for a
 * statement the caller runs anyway before its search: one turn at the database less.
 */
export const hnswSearchWidened = (sql: SqlClient.SqlClient, breadth: number = hnswSearchBreadth) =>
  sql`set_config('hnsw.ef_search', ${String(Math.max(hnswSearchBreadth, breadth))}, true)`

/** Sets the breadth for the rest of the caller's transaction, as a statement of its own. */
export const widenHnswSearch = (sql: SqlClient.SqlClient, breadth: number = hnswSearchBreadth) =>
  sql`SELECT ${hnswSearchWidened(sql, breadth)}`.pipe(Effect.asVoid)
