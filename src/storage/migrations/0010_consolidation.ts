/**
 * Consolidation into observations. An observation row (a memory unit of type `observation`) gains a version and
 * the grouping key the offline consolidator files it under; `observation_history` keeps every create, update and
 * merge with the facts each one added, so the history route can show how an observation came to say what it says.
 * Facts waiting for consolidation are the ones with `consolidated_at IS NULL` (indexed since 0002).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memory_units ADD COLUMN observation_version integer`
  yield* sql`ALTER TABLE memory_units ADD COLUMN consolidation_key text`
  yield* sql`CREATE INDEX memory_units_observation_key ON memory_units (bank_id, consolidation_key)
    WHERE fact_type = 'observation'`
  // "Which observations rest on this fact": resetting a fact and pruning deleted sources ask it.
  yield* sql`CREATE INDEX memory_units_observation_sources ON memory_units USING gin (source_fact_ids)
    WHERE fact_type = 'observation'`
  yield* sql`
    CREATE TABLE observation_history (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      observation_id text NOT NULL REFERENCES memory_units (id) ON DELETE CASCADE,
      version integer NOT NULL,
      change text NOT NULL CHECK (change IN ('created', 'updated', 'merged')),
      text text NOT NULL,
      previous_text text,
      source_fact_ids text[] NOT NULL DEFAULT '{}',
      added_fact_ids text[] NOT NULL DEFAULT '{}',
      merged_observation_ids text[] NOT NULL DEFAULT '{}',
      operation_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX observation_history_observation ON observation_history (observation_id, version)`
})
