/**
 * Mental models and their refresh history. A model remembers the source query its content was generated from
 * (`content_query`) so a delta refresh can tell when it must regenerate in full. History rows are keyed by the
 * operation that wrote them, which makes a re-run of a refresh after a crash a no-op.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE mental_models (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      id text NOT NULL,
      name text NOT NULL,
      source_query text NOT NULL,
      content text NOT NULL DEFAULT '',
      content_query text,
      tags text[] NOT NULL DEFAULT '{}',
      max_tokens integer NOT NULL,
      trigger_mode text NOT NULL CHECK (trigger_mode IN ('full', 'delta')),
      refresh_after_consolidation boolean NOT NULL DEFAULT false,
      reflect_response jsonb,
      last_refreshed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (bank_id, id)
    )`
  yield* sql`CREATE INDEX mental_models_tags ON mental_models USING gin (tags)`
  yield* sql`CREATE INDEX mental_models_after_consolidation ON mental_models (bank_id)
    WHERE refresh_after_consolidation`
  yield* sql`
    CREATE TABLE mental_model_refreshes (
      id text PRIMARY KEY,
      bank_id text NOT NULL,
      mental_model_id text NOT NULL,
      operation_id text UNIQUE,
      mode text NOT NULL CHECK (mode IN ('full', 'delta')),
      requested_mode text NOT NULL CHECK (requested_mode IN ('full', 'delta')),
      fallback_reason text,
      reason text NOT NULL,
      changed boolean NOT NULL,
      source_query text NOT NULL,
      previous_content text,
      content text NOT NULL,
      new_fact_ids text[] NOT NULL DEFAULT '{}',
      changes jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (bank_id, mental_model_id) REFERENCES mental_models (bank_id, id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX mental_model_refreshes_model ON mental_model_refreshes (bank_id, mental_model_id, created_at DESC)`
})
