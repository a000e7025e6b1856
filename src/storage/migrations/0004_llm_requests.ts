/**
 * LLM traces: one row per request to a language model (success or failure) with its purpose, scope, provider,
 * model, outcome, duration, token usage and bounded copies of the prompt and the answer. Rows belong to the
 * bank and go with it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE llm_requests (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      operation_id text,
      purpose text NOT NULL,
      scope text NOT NULL,
      provider text NOT NULL,
      model text NOT NULL,
      status text NOT NULL CHECK (status IN ('success', 'error')),
      error_reason text,
      error_message text,
      attempt integer NOT NULL DEFAULT 1,
      duration_ms integer NOT NULL,
      input_tokens integer NOT NULL DEFAULT 0,
      output_tokens integer NOT NULL DEFAULT 0,
      total_tokens integer NOT NULL DEFAULT 0,
      input_text text NOT NULL,
      output_text text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX llm_requests_bank_time ON llm_requests (bank_id, created_at DESC)`
  yield* sql`CREATE INDEX llm_requests_operation ON llm_requests (operation_id) WHERE operation_id IS NOT NULL`
})
