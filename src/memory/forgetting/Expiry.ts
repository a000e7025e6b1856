/**
 * The one rule every read of memories applies for expiry: a memory whose `expires_at` has come is not there, whether
 * or not the sweep has deleted it yet. SQL reads add `liveAt`; the brain tests the same instant (`MemoryRecords`).
 */
import type { SqlClient } from "effect/sql"

/** The condition on `alias` (a `memory_units` alias) that holds for memories not yet expired at `now`. */
export const liveAt = (sql: SqlClient.SqlClient, alias: string, now: Date) =>
  sql`(${sql.literal(alias)}.expires_at IS NULL OR ${sql.literal(alias)}.expires_at > ${now})`

/** Whether a memory that expires at `expiresAt` (epoch ms, null: never) is still there at `now`. */
export const liveAtMillis = (expiresAt: number | null, now: number) => expiresAt === null || expiresAt > now
