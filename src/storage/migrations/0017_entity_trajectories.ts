/**
 * Entity trajectories (one hidden-Markov summary per entity, with the fact count and newest retain position it was
 * computed from, so a stale one can be found without being told) and entity intelligence (one bank-level map per
 * bank). Banks gain one jsonb column with the overrides of those features' settings.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE banks ADD COLUMN entity_settings jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`
    CREATE TABLE entity_trajectories (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
      computed_at timestamptz NOT NULL DEFAULT now(),
      state_vocabulary jsonb NOT NULL,
      vocabulary_hash text NOT NULL,
      transition_matrix jsonb NOT NULL,
      current_state text NOT NULL,
      viterbi_path jsonb NOT NULL,
      forecast_horizon integer NOT NULL,
      forecast_distribution jsonb NOT NULL,
      forward_log_prob double precision,
      anomaly_score double precision,
      llm_model text NOT NULL,
      prompt_version text NOT NULL,
      fact_count integer NOT NULL,
      last_seq bigint NOT NULL,
      PRIMARY KEY (bank_id, entity_id)
    )`
  yield* sql`CREATE INDEX entity_trajectories_entity ON entity_trajectories (entity_id)`
  yield* sql`
    CREATE TABLE entity_intelligence (
      bank_id text PRIMARY KEY REFERENCES banks (bank_id) ON DELETE CASCADE,
      computed_at timestamptz NOT NULL DEFAULT now(),
      entity_count integer NOT NULL,
      source_entity_count integer NOT NULL,
      entity_snapshot_hash text NOT NULL,
      content text NOT NULL,
      structured_content jsonb NOT NULL,
      entity_context jsonb NOT NULL,
      delta_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      llm_model text NOT NULL,
      prompt_version text NOT NULL
    )`
})
