/**
 * Codebase snapshots are written in bulk, tens of thousands of rows per import, and the write was half of an
 * import. Two columns are documents the database never looks inside — a file's stored parse (read back whole
 * so a refresh re-parses only changed files) and a chunk's significance components (shown as they are) — so
 * they become `json`, kept as the text it arrived in, instead of `jsonb`, which decomposed every document on
 * the way in (measured: the chunk insert's server time roughly halved without it). A snapshot's source
 * archive is a zip, already compressed: stored out of line without another compression attempt.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE codebase_files ALTER COLUMN parse TYPE json USING parse::json`
  yield* sql`ALTER TABLE codebase_chunks ALTER COLUMN significance_components TYPE json USING significance_components::json`
  yield* sql`ALTER TABLE codebase_snapshots ALTER COLUMN source_archive SET STORAGE EXTERNAL`
})
