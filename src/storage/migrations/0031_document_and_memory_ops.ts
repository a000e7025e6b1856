/**
 * Two stores the document and memory operations of the 0.9 client need. `memory_unit_archive` holds invalidated
 * facts, moved out of `memory_units` so recall, consolidation and the brain never need a "skip invalidated"
 * filter: the row as it was (restoring puts it back), its entity names and the causal links it took part in.
 * `stored_files` holds files the server produced or staged for a background operation (document export archives,
 * imported archives awaiting their task), by an unguessable key; they are served by key, never by a path.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE memory_unit_archive (
      unit_id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      unit jsonb NOT NULL,
      entity_names text[] NOT NULL DEFAULT '{}',
      causal_links jsonb NOT NULL DEFAULT '[]'::jsonb,
      reason text,
      invalidated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX memory_unit_archive_bank ON memory_unit_archive (bank_id, invalidated_at)`
  yield* sql`
    CREATE TABLE stored_files (
      key text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      purpose text NOT NULL,
      filename text NOT NULL,
      content_type text NOT NULL,
      size_bytes integer NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX stored_files_bank ON stored_files (bank_id, created_at)`
})
