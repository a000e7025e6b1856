/**
 * Garbage collection of the repo object store in bounded slices (`src/repos/GarbageCollection.ts`):
 * - `repo_gc_requests`: a collection is wanted (a row inserted after commits, resets, branch deletes and repo deletes;
 *   a cycle's start takes them all, so a burst asks once). Inserts, not an update of one row: a request never waits
 *   on a lock (a bank delete asking from its trigger while a cycle starts would otherwise deadlock with it).
 * - `repo_gc_state`, one row: how far the cycle under way got (`phase`, `sweep_after`), so a crash resumes it on the
 *   next start.
 * - `repo_gc_marks`: the objects the cycle found reachable so far; `expanded` once their children are marked too.
 * - `repo_forks`: a fork copied in slices (`src/repos/SlicedFork.ts`): its source state (a collection root until the
 *   fork ends), how far it got, and what it answers when done; a crash resumes it on the same fork call.
 * - Deleting a repo no longer marks the whole store inside the delete's transaction: it asks for a collection.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repo_gc_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      phase text CHECK (phase IN ('mark', 'sweep')),
      started_at timestamptz,
      sweep_after text,
      marked bigint NOT NULL DEFAULT 0,
      removed bigint NOT NULL DEFAULT 0,
      removed_bytes bigint NOT NULL DEFAULT 0,
      commits_removed bigint NOT NULL DEFAULT 0,
      finished_at timestamptz
    )`
  yield* sql`INSERT INTO repo_gc_state (id) VALUES (true)`
  yield* sql`CREATE TABLE repo_gc_requests (requested_at timestamptz NOT NULL DEFAULT now())`
  yield* sql`INSERT INTO repo_gc_requests DEFAULT VALUES`
  yield* sql`CREATE TABLE repo_gc_marks (hash text PRIMARY KEY, expanded boolean NOT NULL)`
  yield* sql`CREATE INDEX repo_gc_marks_pending ON repo_gc_marks (hash) WHERE NOT expanded`
  yield* sql`
    CREATE TABLE repo_forks (
      target_bank_id text PRIMARY KEY,
      source_repo_id text NOT NULL,
      tables jsonb NOT NULL,
      row_counts jsonb NOT NULL,
      progress jsonb NOT NULL,
      request jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION repo_deleted_collect() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO repo_gc_requests DEFAULT VALUES;
      RETURN NULL;
    END $$`)
})
