/** Banks and the durable operations table that is the source of truth for all background work. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE banks (
      bank_id text PRIMARY KEY,
      name text,
      reflect_mission text,
      retain_mission text,
      retain_extraction_mode text,
      retain_custom_instructions text,
      retain_chunk_size integer,
      bank_preset text,
      enable_observations boolean,
      observations_mission text,
      disposition_skepticism integer NOT NULL DEFAULT 3,
      disposition_literalism integer NOT NULL DEFAULT 3,
      disposition_empathy integer NOT NULL DEFAULT 3,
      last_consolidated_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE operations (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      task_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
      items_count integer NOT NULL DEFAULT 0,
      document_id text,
      parent_id text REFERENCES operations (id) ON DELETE CASCADE,
      sub_batch_index integer,
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      result jsonb,
      error_message text,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX operations_bank_status ON operations (bank_id, status, created_at)`
  yield* sql`CREATE INDEX operations_parent ON operations (parent_id) WHERE parent_id IS NOT NULL`
})
