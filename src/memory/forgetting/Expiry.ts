/**
 * The one rule every read of memories applies for expiry: a memory whose `expires_at` has come is not there, whether
 * or not the sweep has deleted it yet. SQL reads add `liveAt`; the brain tests the same instant (`MemoryRecords`).
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** The condition on `alias` (a `memory_units` alias) that holds for memories not yet expired at `now`. */
export const liveAt = (sql: SqlClient.SqlClient, alias: string, now: Date) =>
  sql`(${sql.literal(alias)}.expires_at IS NULL OR ${sql.literal(alias)}.expires_at > ${now})`

/**
 * The condition on `alias` (a `documents` alias, or a `chunks` alias with `of: "chunk"`) that holds unless every memory
 * it holds has expired by `now`: such a document or chunk is gone from every read, its text included, as the sweep
 * will delete it. One that holds no memory at all (nothing was extracted from it) or a live one stays.
 */
export const notAllExpired = (sql: SqlClient.SqlClient, alias: string, now: Date, of: "document" | "chunk") => {
  const owner = sql.literal(alias)
  const holds = of === "document"
    ? sql`x.bank_id = ${owner}.bank_id AND x.document_id = ${owner}.document_id`
    : sql`x.chunk_id = ${owner}.id`
  return sql`(NOT EXISTS (SELECT 1 FROM memory_units x WHERE ${holds} AND x.expires_at <= ${now})
    OR EXISTS (SELECT 1 FROM memory_units x WHERE ${holds} AND ${liveAt(sql, "x", now)}))`
}

/** Whether a memory that expires at `expiresAt` (epoch ms, null: never) is still there at `now`. */
export const liveAtMillis = (expiresAt: number | null, now: number) => expiresAt === null || expiresAt > now

/**
 * Which of `ids` have expired by `now` but are still stored: derived state that names memories by id (a trajectory's
 * steps) drops them when it is read, as the sweep will drop them when it runs.
 */
export const expiredAmong = (sql: SqlClient.SqlClient, ids: ReadonlyArray<string>, now: Date) =>
  ids.length === 0
    ? Effect.succeed(new Set<string>())
    : sql<{ id: string }>`SELECT id FROM memory_units WHERE id IN ${sql.in([...new Set(ids)])}
        AND expires_at <= ${now}`.pipe(Effect.map((rows) => new Set(rows.map((row) => row.id))))
