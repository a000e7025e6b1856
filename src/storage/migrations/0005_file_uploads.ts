/**
 * Uploaded files awaiting conversion. File retain is asynchronous, and an acknowledged upload must survive a
 * crash, so the bytes are stored with the operation and removed once the file's memories are stored.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE file_uploads (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      filename text NOT NULL,
      content_type text,
      size_bytes integer NOT NULL,
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
})
