/**
 * Memory repos: git-like versioning of a bank. Rows are content-addressed objects (`repo_objects`, stored once
 * however many commits hold them); a commit names, per table, a manifest of bucket manifests, so a commit after
 * a small change stores only the changed rows and buckets. Branch workspaces other than the active one are
 * hidden banks (ids starting `__repo__`, which the bank id rules forbid to clients); `repo_id_maps` remembers
 * how a workspace renamed the globally unique ids it holds, so its rows compare and restore in root-bank ids.
 * None of these tables has a `bank_id` column, so the versioning never versions itself.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE repo_objects (
      hash text PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('row', 'bucket', 'table')),
      body jsonb NOT NULL,
      size_bytes integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE memory_repos (
      repo_id text PRIMARY KEY,
      root_bank_id text NOT NULL UNIQUE REFERENCES banks (bank_id) ON DELETE CASCADE,
      name text NOT NULL,
      active_branch text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE repo_commits (
      commit_id text PRIMARY KEY,
      repo_id text NOT NULL REFERENCES memory_repos (repo_id) ON DELETE CASCADE,
      parent_commit_id text REFERENCES repo_commits (commit_id) ON DELETE SET NULL,
      branch_name text NOT NULL,
      message text NOT NULL,
      actor text NOT NULL,
      root_hash text NOT NULL,
      tables jsonb NOT NULL,
      row_counts jsonb NOT NULL,
      bytes_added bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX repo_commits_repo ON repo_commits (repo_id, created_at)`
  yield* sql`
    CREATE TABLE repo_branches (
      repo_id text NOT NULL REFERENCES memory_repos (repo_id) ON DELETE CASCADE,
      branch_name text NOT NULL,
      head_commit_id text REFERENCES repo_commits (commit_id) ON DELETE SET NULL,
      workspace_bank_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (repo_id, branch_name)
    )`
  yield* sql`CREATE INDEX repo_branches_workspace ON repo_branches (workspace_bank_id)`
  yield* sql`
    CREATE TABLE repo_id_maps (
      workspace_bank_id text NOT NULL,
      local_id text NOT NULL,
      canonical_id text NOT NULL,
      PRIMARY KEY (workspace_bank_id, local_id)
    )`
  yield* sql`CREATE INDEX repo_id_maps_canonical ON repo_id_maps (workspace_bank_id, canonical_id)`
})
