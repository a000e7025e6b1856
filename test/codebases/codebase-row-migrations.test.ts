/**
 * Upgrading a database that already holds codebase snapshots. Migration 0026: symbols written to their own table
 * by earlier versions become the chunk's symbol columns, and the significance components stored as objects are
 * rewritten to the packed form, which reads back as the same object the API showed before the upgrade. Migration
 * 0027: edge rows move into the file they start from and read back as the same edges.
 */
import { NodeServices } from "@effect/platform-node"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlLive from "../../layers/storage/SqlLive.ts"
import { unpackComponents } from "../../src/codebases/intel/Significance.ts"
import type { EdgeRow } from "../../src/codebases/snapshot/SnapshotRows.ts"
import { snapshotEdges } from "../../src/codebases/snapshot/StoredEdges.ts"
import { migrations } from "../../src/storage/migrations/index.ts"

const upTo = (last: number) =>
  PgMigrator.run({
    loader: PgMigrator.fromRecord(
      Object.fromEntries(Object.entries(migrations).filter(([id]) => Number(id.slice(0, 4)) <= last))
    ),
    table: "engram_migrations"
  })

const components = {
  role_weight: 0.4,
  symbol_kind_weight: 0.9,
  exportness: 1,
  pagerank_centrality: 0.3692,
  fanin: 0,
  complexity_density: 0.3333,
  safety_priority: 0,
  cluster_representativeness: 0.4,
  change_boost: 1,
  parse_confidence: 1,
  score: 0.4978,
  route_hint: "review",
  reason: "gray zone: human decides"
}

/** One snapshot as version 0025 stored it: a function symbol with its chunk, and a region chunk. */
const oldSnapshot = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO banks (bank_id) VALUES ('b1')`
  yield* sql`INSERT INTO codebases (id, bank_id, name, source_type) VALUES ('cb1', 'b1', 'demo', 'zip')`
  yield* sql`INSERT INTO codebase_snapshots (id, codebase_id, bank_id, status) VALUES ('s1', 'cb1', 'b1', 'review_required')`
  yield* sql`INSERT INTO codebase_symbols (id, snapshot_id, path, language, name, kind, container, fq_name, exported,
      start_line, end_line, complexity, pagerank, fanin)
    VALUES ('sym1', 's1', 'src/a.ts', 'typescript', 'run', 'function', NULL, 'run', true, 3, 9, 4, 0.75, 2)`
  for (
    const [id, kind, label, parent, start, end] of [["c1", "function", "run", "run", 3, 9], [
      "c2",
      "region",
      "a.ts section 1",
      null,
      1,
      2
    ]] as const
  ) {
    yield* sql`INSERT INTO codebase_chunks (id, snapshot_id, chunk_key, path, language, kind, label, parent_symbol, parent_fq_name,
        start_line, end_line, content_text, content_hash, preview_text, parse_confidence, route_target, change_kind,
        significance_score, significance_components, auto_route_reason, file_role)
      VALUES (${id}, 's1', ${`key-${id}`}, 'src/a.ts', 'typescript', ${kind}, ${label}, ${parent}, ${parent}, ${start}, ${end},
        'text', 'hash', 'text', 1, 'unrouted', 'added', 0.4978, ${
      JSON.stringify(components)
    }::json, 'gray zone: human decides', 'source')`
  }
})

describe("migration 0026 (lean codebase rows)", () => {
  it.effect("keeps an existing snapshot's symbols and significance components", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* upTo(25)
      yield* oldSnapshot
      yield* upTo(26)

      const [table] = yield* sql<{ found: string | null }>`SELECT to_regclass('codebase_symbols')::text AS found`
      assert.isNull(table!.found, "the symbol table is gone")
      const chunks = yield* sql<
        {
          id: string
          symbolExported: boolean | null
          symbolPagerank: number | null
          significanceComponents: unknown
          significanceScore: number
          autoRouteReason: string
        }
      >`
        SELECT id, symbol_exported, symbol_pagerank, significance_components, significance_score, auto_route_reason
        FROM codebase_chunks ORDER BY id`
      assert.deepStrictEqual(chunks.map((c) => [c.id, c.symbolExported, c.symbolPagerank]), [["c1", true, 0.75], [
        "c2",
        null,
        null
      ]])
      for (const chunk of chunks) {
        assert.isTrue(Array.isArray(chunk.significanceComponents), "stored packed")
        assert.deepStrictEqual(
          unpackComponents(chunk.significanceComponents, chunk.significanceScore, chunk.autoRouteReason),
          components
        )
      }
    }).pipe(Effect.provide(Layer.merge(SqlLive.pglite(), NodeServices.layer))), 60_000)

  it.effect("keeps an existing snapshot's edges, each in the file it starts from", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* upTo(26)
      yield* sql`INSERT INTO banks (bank_id) VALUES ('b2')`
      yield* sql`INSERT INTO codebases (id, bank_id, name, source_type) VALUES ('cb2', 'b2', 'demo', 'zip')`
      yield* sql`INSERT INTO codebase_snapshots (id, codebase_id, bank_id, status) VALUES ('s2', 'cb2', 'b2', 'review_required')`
      for (const path of ["src/a.ts", "src/b.ts", "src/c.ts"]) {
        yield* sql`INSERT INTO codebase_files (snapshot_id, path, language, status, file_role, content_hash, change_kind, line_count, chunk_count)
          VALUES ('s2', ${path}, 'typescript', 'indexed', 'source', 'h', 'added', 10, 1)`
      }
      const edges: Array<EdgeRow> = [
        {
          edgeType: "imports",
          fromPath: "src/a.ts",
          toPath: "src/b.ts",
          fromSymbol: null,
          toSymbol: null,
          targetRef: "./b.ts",
          label: "{ run, stop }"
        },
        {
          edgeType: "imports",
          fromPath: "src/a.ts",
          toPath: null,
          fromSymbol: null,
          toSymbol: null,
          targetRef: "effect",
          label: "effect"
        },
        {
          edgeType: "calls",
          fromPath: "src/a.ts",
          toPath: "src/b.ts",
          fromSymbol: "main",
          toSymbol: "run",
          targetRef: "run",
          label: "main -> run"
        },
        {
          edgeType: "calls",
          fromPath: "src/c.ts",
          toPath: "src/a.ts",
          fromSymbol: "K.go",
          toSymbol: "main",
          targetRef: "main",
          label: "K.go -> main"
        }
      ]
      for (const edge of edges) {
        yield* sql`INSERT INTO codebase_edges (snapshot_id, edge_type, from_path, to_path, from_symbol, to_symbol, target_ref, label)
          VALUES ('s2', ${edge.edgeType}, ${edge.fromPath}, ${edge.toPath}, ${edge.fromSymbol}, ${edge.toSymbol}, ${edge.targetRef}, ${edge.label})`
      }
      yield* upTo(27)

      const [table] = yield* sql<{ found: string | null }>`SELECT to_regclass('codebase_edges')::text AS found`
      assert.isNull(table!.found, "the edge table is gone")
      assert.deepStrictEqual(yield* snapshotEdges(sql, "s2"), edges)
      const [b] = yield* sql<
        { edges: unknown }
      >`SELECT edges FROM codebase_files WHERE snapshot_id = 's2' AND path = 'src/b.ts'`
      assert.isNull(b!.edges, "a file no edge starts from holds none")
    }).pipe(Effect.provide(Layer.merge(SqlLive.pglite(), NodeServices.layer))), 60_000)
})
