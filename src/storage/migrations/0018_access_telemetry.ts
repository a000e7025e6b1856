/**
 * Access telemetry and the bank's activity model. `memory_access_events` holds one row per item (memory, chunk or
 * mental model) a recall, reflect or mental-model read returned, with the rerank score it had and one `access_id`
 * per read; rows are written in batches off the request path, and `memory_access_counts` keeps each memory's
 * count. `brain_activity_models` is the activity model the last sub-routine built (hour counts, Kalman and HMM
 * state) with the marks of the events it has folded in.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE memory_access_events (
      seq bigserial PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      access_id text NOT NULL,
      source text NOT NULL CHECK (source IN ('recall', 'reflect', 'mental_model')),
      item_type text NOT NULL CHECK (item_type IN ('memory', 'chunk', 'mental_model')),
      -- No foreign key: an access is history and stays when the item is deleted (influence skips the missing).
      item_id text NOT NULL,
      score real,
      accessed_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX memory_access_events_time ON memory_access_events (bank_id, accessed_at)`
  // Old accesses are pruned across banks (AccessTelemetry's retention).
  yield* sql`CREATE INDEX memory_access_events_age ON memory_access_events (accessed_at)`
  // The activity model folds in what arrived after its mark.
  yield* sql`CREATE INDEX memory_access_events_seq ON memory_access_events (bank_id, seq)`
  yield* sql`CREATE INDEX memory_access_events_item ON memory_access_events (bank_id, item_id, accessed_at)`
  // How often reads returned each memory (the graph views show it). Kept beside memory_units, not in it: counting
  // there rewrote a wide row (embedding, search text) per recalled memory and touched every one of its indexes,
  // the HNSW index included, a write load that grew with the read load.
  yield* sql`
    CREATE TABLE memory_access_counts (
      unit_id text PRIMARY KEY REFERENCES memory_units (id) ON DELETE CASCADE,
      bank_id text NOT NULL,
      access_count integer NOT NULL
    )`
  yield* sql`
    CREATE TABLE brain_activity_models (
      bank_id text PRIMARY KEY REFERENCES banks (bank_id) ON DELETE CASCADE,
      model jsonb NOT NULL,
      access_mark bigint NOT NULL,
      memory_mark bigint NOT NULL,
      built_at timestamptz NOT NULL
    )`
})
