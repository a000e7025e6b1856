/**
 * Dreams and trance: the runs (one per `dream_generation` operation, so a re-run after a crash finds its run
 * instead of writing a second one), their predictions with an expiry time and the outcomes recorded for them
 * (by a user or by the automatic expiry check), promotion proposals with their review, and the durable trance
 * schedule (one row per bank: when its next scheduled run is due). Banks gain one jsonb column with the bank's
 * own dream settings.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE banks ADD COLUMN dream_settings jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`
    CREATE TABLE dream_runs (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      operation_id text UNIQUE,
      status text NOT NULL CHECK (status IN ('success', 'low_signal', 'duplicate_low_novelty', 'failed_validation',
        'failed_llm')),
      run_type text NOT NULL CHECK (run_type IN ('dream', 'trance')),
      trigger_source text NOT NULL CHECK (trigger_source IN ('manual', 'event', 'cron')),
      generator text NOT NULL CHECK (generator IN ('llm', 'deterministic')),
      summary text,
      narrative_html text,
      evidence_basis jsonb NOT NULL DEFAULT '{}'::jsonb,
      signals jsonb NOT NULL DEFAULT '{}'::jsonb,
      growth_hypotheses jsonb NOT NULL DEFAULT '[]'::jsonb,
      validation_outcomes jsonb NOT NULL DEFAULT '[]'::jsonb,
      confidence jsonb NOT NULL DEFAULT '{}'::jsonb,
      novelty_score double precision NOT NULL DEFAULT 0,
      quality_score double precision NOT NULL DEFAULT 0,
      maturity_tier text NOT NULL,
      failure_reason text,
      evidence_ids text[] NOT NULL DEFAULT '{}',
      input_tokens integer NOT NULL DEFAULT 0,
      output_tokens integer NOT NULL DEFAULT 0,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz
    )`
  yield* sql`CREATE INDEX dream_runs_bank ON dream_runs (bank_id, created_at DESC)`
  yield* sql`
    CREATE TABLE dream_predictions (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      run_id text NOT NULL REFERENCES dream_runs (id) ON DELETE CASCADE,
      title text NOT NULL,
      description text NOT NULL,
      target_ref text,
      target_kind text NOT NULL,
      horizon text NOT NULL,
      confidence double precision NOT NULL,
      success_criteria jsonb NOT NULL DEFAULT '[]'::jsonb,
      -- Words a memory retained after the run must contain to count as the prediction coming true.
      check_terms text[] NOT NULL DEFAULT '{}',
      supporting_evidence_ids text[] NOT NULL DEFAULT '{}',
      expiration_window_days integer NOT NULL,
      expires_at timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'unresolved', 'confirmed', 'contradicted', 'expired')),
      validation_notes text,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX dream_predictions_run ON dream_predictions (run_id)`
  // The expiry check looks for open predictions by due time, across banks.
  yield* sql`CREATE INDEX dream_predictions_due ON dream_predictions (expires_at)
    WHERE status IN ('pending', 'unresolved')`
  yield* sql`
    CREATE TABLE dream_prediction_outcomes (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      prediction_id text NOT NULL REFERENCES dream_predictions (id) ON DELETE CASCADE,
      status text NOT NULL,
      note text,
      evidence_ids text[] NOT NULL DEFAULT '{}',
      recorded_by text NOT NULL CHECK (recorded_by IN ('user', 'system')),
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX dream_prediction_outcomes_bank ON dream_prediction_outcomes (bank_id, created_at DESC)`
  yield* sql`
    CREATE TABLE dream_proposals (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      run_id text NOT NULL REFERENCES dream_runs (id) ON DELETE CASCADE,
      proposal_type text NOT NULL,
      title text NOT NULL,
      content text NOT NULL,
      confidence double precision NOT NULL,
      tags text[] NOT NULL DEFAULT '{}',
      supporting_evidence_ids text[] NOT NULL DEFAULT '{}',
      rationale text,
      review_status text NOT NULL CHECK (review_status IN ('pending', 'approved', 'rejected', 'needs_more_evidence')),
      approval_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      reviewed_at timestamptz,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX dream_proposals_run ON dream_proposals (run_id)`
  yield* sql`
    CREATE TABLE dream_schedules (
      bank_id text PRIMARY KEY REFERENCES banks (bank_id) ON DELETE CASCADE,
      next_due_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
