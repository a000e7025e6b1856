/**
 * Dataset curation (forge/taste): datasets of hand-authored training examples and their sets. A set keeps its
 * immutable seed (`source_payload`) beside the editable copy (`working_payload`) and an append-only log of what
 * changed it; variants point at their seed through `parent_set_id` and share its `set_key`. Operations gain the
 * stage they reached and its progress (see src/operations/OperationStage.ts); `IF NOT EXISTS` because other
 * long-running features may need the same columns.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE taste_datasets (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      schema_type text NOT NULL CHECK (schema_type IN ('chat_messages', 'qa_pair', 'custom')),
      taste_tags text[] NOT NULL DEFAULT '{}',
      taste_profile jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX taste_datasets_bank ON taste_datasets (bank_id, created_at, id)`
  yield* sql`
    CREATE TABLE taste_sets (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      dataset_id text NOT NULL REFERENCES taste_datasets (id) ON DELETE CASCADE,
      set_key text NOT NULL,
      variant_index integer NOT NULL DEFAULT 0,
      parent_set_id text REFERENCES taste_sets (id) ON DELETE SET NULL,
      source_payload jsonb NOT NULL,
      working_payload jsonb NOT NULL,
      transform_log jsonb NOT NULL DEFAULT '[]'::jsonb,
      status text NOT NULL CHECK (status IN ('draft', 'ready', 'retained', 'archived')),
      taste_tags text[] NOT NULL DEFAULT '{}',
      memory_unit_ids text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (dataset_id, set_key, variant_index)
    )`
  // The foreign key from variants looks seeds up on every delete: without this index each delete scans the table.
  yield* sql`ALTER TABLE operations ADD COLUMN IF NOT EXISTS stage text`
  yield* sql`ALTER TABLE operations ADD COLUMN IF NOT EXISTS stage_progress jsonb`
  yield* sql`ALTER TABLE operations ADD COLUMN IF NOT EXISTS stage_updated_at timestamptz`
  yield* sql`CREATE INDEX taste_sets_parent ON taste_sets (parent_set_id) WHERE parent_set_id IS NOT NULL`
})
