/**
 * The memory graph: documents and their chunks, memory units (facts, observations, opinions) with embeddings
 * and a full-text vector, the links between units, and entities. Embeddings are dimension-free `vector`
 * columns because the dimension follows the configured model; indexes per dimension come with the embedder.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE documents (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      document_id text NOT NULL,
      content_hash text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      tags text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (bank_id, document_id)
    )`
  yield* sql`
    CREATE TABLE chunks (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      document_id text,
      chunk_index integer NOT NULL,
      text text NOT NULL,
      content_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX chunks_document ON chunks (bank_id, document_id)`
  yield* sql`
    CREATE TABLE memory_units (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      text text NOT NULL,
      fact_type text NOT NULL CHECK (fact_type IN ('world', 'experience', 'observation', 'opinion')),
      context text,
      occurred_start timestamptz,
      occurred_end timestamptz,
      mentioned_at timestamptz,
      document_id text,
      chunk_id text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      tags text[] NOT NULL DEFAULT '{}',
      observation_scopes jsonb,
      source_fact_ids text[],
      confidence real,
      content_hash text NOT NULL,
      embedding vector,
      search_text tsvector,
      access_count integer NOT NULL DEFAULT 0,
      consolidated_at timestamptz,
      operation_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX memory_units_bank_type ON memory_units (bank_id, fact_type, created_at)`
  yield* sql`CREATE INDEX memory_units_document ON memory_units (bank_id, document_id)`
  yield* sql`CREATE INDEX memory_units_hash ON memory_units (bank_id, content_hash)`
  yield* sql`CREATE INDEX memory_units_search ON memory_units USING gin (search_text)`
  yield* sql`CREATE INDEX memory_units_tags ON memory_units USING gin (tags)`
  yield* sql`CREATE INDEX memory_units_pending_consolidation ON memory_units (bank_id)
    WHERE consolidated_at IS NULL AND fact_type IN ('world', 'experience')`
  yield* sql`
    CREATE TABLE memory_links (
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      from_id text NOT NULL REFERENCES memory_units (id) ON DELETE CASCADE,
      to_id text NOT NULL REFERENCES memory_units (id) ON DELETE CASCADE,
      link_type text NOT NULL,
      weight real NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (from_id, to_id, link_type)
    )`
  yield* sql`CREATE INDEX memory_links_bank ON memory_links (bank_id, link_type)`
  yield* sql`CREATE INDEX memory_links_to ON memory_links (to_id)`
  yield* sql`
    CREATE TABLE entities (
      id text PRIMARY KEY,
      bank_id text NOT NULL REFERENCES banks (bank_id) ON DELETE CASCADE,
      canonical_name text NOT NULL,
      entity_type text,
      mention_count integer NOT NULL DEFAULT 0,
      first_seen timestamptz,
      last_seen timestamptz,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX entities_name ON entities (bank_id, lower(canonical_name))`
  yield* sql`
    CREATE TABLE unit_entities (
      unit_id text NOT NULL REFERENCES memory_units (id) ON DELETE CASCADE,
      entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
      PRIMARY KEY (unit_id, entity_id)
    )`
  yield* sql`CREATE INDEX unit_entities_entity ON unit_entities (entity_id)`
})
