/**
 * Directives (a bank's hard rules for reflect, ordered by priority and scoped by tags) and, for opinions, how far
 * each one has been checked against newer facts: `reinforced_seq` is the retain sequence number up to which
 * `reinforce_opinion` has already adjusted its confidence, so a re-run never counts a fact twice.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE directives (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      name text NOT NULL,
      content text NOT NULL,
      priority integer NOT NULL DEFAULT 0,
      is_active boolean NOT NULL DEFAULT true,
      tags text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX directives_bank_priority ON directives (bank_id, priority DESC, created_at)`
  yield* sql`ALTER TABLE memory_units ADD COLUMN reinforced_seq bigint`
  yield* sql`CREATE INDEX memory_units_opinions ON memory_units (bank_id) WHERE fact_type = 'opinion'`
})
