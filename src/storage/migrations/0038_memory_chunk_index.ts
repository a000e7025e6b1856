/**
 * Which memories still use a chunk. Forget and the expiry and retention sweeps delete a chunk once no memory uses it
 * (`DerivedDeletion.ts`); without an index on `chunk_id` that check read every memory of every bank once per slice of
 * 200 (a sequential scan: about 10 MB at 10k memories, ten times that at 100k, re-read from PGlite's files since
 * its 16 MB of shared buffers do not hold the table). Partial: memories without a chunk are not indexed.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX memory_units_chunk ON memory_units (chunk_id) WHERE chunk_id IS NOT NULL`
})
