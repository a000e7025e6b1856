/**
 * Codebases: an imported repository, its parsed snapshots (files with their stored parse, symbols, import and
 * call edges, chunks with routes and code intelligence, derived artifacts) and the log of manual
 * overrides of auto-triage. A snapshot keeps its source archive until it is parsed, so an import survives a
 * restart. Everything cascades from the bank and the codebase.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE codebases (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      name text NOT NULL,
      source_type text NOT NULL CHECK (source_type IN ('zip', 'file', 'githost')),
      source_config jsonb NOT NULL DEFAULT '{}'::jsonb,
      triage_settings jsonb,
      current_snapshot_id text,
      approved_snapshot_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (bank_id, source_type, name)
    )`
  yield* sql`
    CREATE TABLE codebase_snapshots (
      id text PRIMARY KEY,
      codebase_id text NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
      bank_id text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'review_required', 'review_in_progress',
        'approved', 'partially_approved', 'failed')),
      source_ref text,
      source_commit_sha text,
      previous_snapshot_id text,
      source_archive bytea,
      stats jsonb NOT NULL DEFAULT '{}'::jsonb,
      repo_map jsonb,
      error text,
      approved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX codebase_snapshots_codebase ON codebase_snapshots (codebase_id, created_at DESC)`
  yield* sql`
    CREATE TABLE codebase_files (
      snapshot_id text NOT NULL REFERENCES codebase_snapshots (id) ON DELETE CASCADE,
      path text NOT NULL,
      language text,
      status text NOT NULL,
      reason text,
      file_role text NOT NULL,
      content_hash text NOT NULL,
      change_kind text NOT NULL,
      line_count integer NOT NULL,
      chunk_count integer NOT NULL,
      parse jsonb,
      PRIMARY KEY (snapshot_id, path)
    )`
  yield* sql`
    CREATE TABLE codebase_symbols (
      id text PRIMARY KEY,
      snapshot_id text NOT NULL REFERENCES codebase_snapshots (id) ON DELETE CASCADE,
      path text NOT NULL,
      language text,
      name text NOT NULL,
      kind text NOT NULL,
      container text,
      fq_name text NOT NULL,
      exported boolean NOT NULL,
      start_line integer NOT NULL,
      end_line integer NOT NULL,
      complexity integer NOT NULL,
      pagerank real NOT NULL,
      fanin integer NOT NULL
    )`
  yield* sql`CREATE INDEX codebase_symbols_name ON codebase_symbols (snapshot_id, name)`
  yield* sql`CREATE INDEX codebase_symbols_fq ON codebase_symbols (snapshot_id, fq_name)`
  yield* sql`
    CREATE TABLE codebase_edges (
      snapshot_id text NOT NULL REFERENCES codebase_snapshots (id) ON DELETE CASCADE,
      edge_type text NOT NULL,
      from_path text NOT NULL,
      to_path text,
      from_symbol text,
      to_symbol text,
      target_ref text NOT NULL,
      label text NOT NULL
    )`
  yield* sql`CREATE INDEX codebase_edges_to ON codebase_edges (snapshot_id, to_path)`
  yield* sql`CREATE INDEX codebase_edges_from ON codebase_edges (snapshot_id, from_path)`
  yield* sql`
    CREATE TABLE codebase_chunks (
      id text PRIMARY KEY,
      snapshot_id text NOT NULL REFERENCES codebase_snapshots (id) ON DELETE CASCADE,
      chunk_key text NOT NULL,
      path text NOT NULL,
      language text,
      kind text NOT NULL,
      label text NOT NULL,
      container text,
      parent_symbol text,
      parent_fq_name text,
      start_line integer NOT NULL,
      end_line integer NOT NULL,
      content_text text NOT NULL,
      content_hash text NOT NULL,
      preview_text text NOT NULL,
      parse_confidence real NOT NULL,
      cluster_id text,
      cluster_label text,
      route_target text NOT NULL CHECK (route_target IN ('memory', 'research', 'dismissed', 'unrouted')),
      route_source text,
      auto_route_reason text,
      change_kind text NOT NULL,
      related_count integer NOT NULL DEFAULT 0,
      document_id text,
      significance_score real NOT NULL,
      significance_components jsonb,
      file_role text NOT NULL,
      complexity_score real,
      safety_tags text[] NOT NULL DEFAULT '{}',
      pagerank_centrality real,
      fanin_count integer NOT NULL DEFAULT 0,
      UNIQUE (snapshot_id, chunk_key)
    )`
  yield* sql`CREATE INDEX codebase_chunks_order ON codebase_chunks (snapshot_id, significance_score DESC, path, start_line)`
  yield* sql`CREATE INDEX codebase_chunks_route ON codebase_chunks (snapshot_id, route_target)`
  yield* sql`
    CREATE TABLE codebase_artifacts (
      snapshot_id text NOT NULL REFERENCES codebase_snapshots (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('symbol_card', 'module_brief', 'repo_map')),
      ref_id text NOT NULL,
      rank integer NOT NULL,
      body jsonb NOT NULL,
      PRIMARY KEY (snapshot_id, kind, ref_id)
    )`
  yield* sql`
    CREATE TABLE codebase_triage_overrides (
      id text PRIMARY KEY,
      codebase_id text NOT NULL REFERENCES codebases (id) ON DELETE CASCADE,
      snapshot_id text NOT NULL,
      chunk_id text NOT NULL,
      prior_route text NOT NULL,
      prior_reason text,
      new_route text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
})
