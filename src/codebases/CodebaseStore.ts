/**
 * The codebase tables: codebases and snapshots (create, find, status), and the bulk write of a parsed snapshot
 * in one transaction (any rows a crashed earlier attempt left for the snapshot are replaced). Bulk rows travel as
 * one JSON parameter per batch, far below the protocol's parameter limit; `json_to_recordset` reads plain `json`
 * row by row, where `jsonb` would first be built for the whole batch.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { ArtifactRow } from "./intel/Artifacts.ts"
import type { FileParse } from "./parse/SyntaxExtractor.ts"
import type { PreviousFile } from "./snapshot/SnapshotPlan.ts"
import type { SnapshotRows } from "./snapshot/SnapshotRows.ts"

export interface CodebaseRecord {
  readonly id: string
  readonly bankId: string
  readonly name: string
  readonly sourceType: "zip" | "file" | "githost"
  readonly sourceConfig: Record<string, unknown>
  readonly triageSettings: Record<string, unknown> | null
  readonly currentSnapshotId: string | null
  readonly approvedSnapshotId: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface SnapshotRecord {
  readonly id: string
  readonly codebaseId: string
  readonly bankId: string
  readonly status: string
  readonly sourceRef: string | null
  readonly sourceCommitSha: string | null
  readonly previousSnapshotId: string | null
  readonly stats: Record<string, any>
  readonly error: string | null
  readonly approvedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

const batchRows = 1000

export class CodebaseStore extends Context.Service<CodebaseStore, {
  readonly find: (bankId: string, id: string) => Effect.Effect<Option.Option<CodebaseRecord>>
  readonly findByName: (bankId: string, sourceType: string, name: string) => Effect.Effect<Option.Option<CodebaseRecord>>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<CodebaseRecord>>
  readonly create: (record: { id: string; bankId: string; name: string; sourceType: string; sourceConfig: unknown }) => Effect.Effect<void>
  readonly updateSource: (id: string, sourceConfig: unknown) => Effect.Effect<void>
  readonly setTriage: (id: string, settings: unknown) => Effect.Effect<void>
  readonly snapshot: (id: string) => Effect.Effect<Option.Option<SnapshotRecord>>
  readonly createSnapshot: (snapshot: {
    id: string; codebaseId: string; bankId: string; sourceRef: string | null; sourceCommitSha: string | null
    previousSnapshotId: string | null; archive: Uint8Array; stats: unknown
  }) => Effect.Effect<void>
  readonly archive: (snapshotId: string) => Effect.Effect<Uint8Array | null>
  readonly setStatus: (snapshotId: string, status: string, extra?: { stats?: unknown; error?: string | null }) => Effect.Effect<void>
  readonly previousFiles: (snapshotId: string | null) => Effect.Effect<Map<string, PreviousFile>>
  readonly previousRoutes: (snapshotId: string | null) => Effect.Effect<Map<string, { contentHash: string; routeTarget: string }>>
  /**
   * Removes a snapshot that was never built (pending or processing; a built one stays), and its codebase when that
   * is left with no snapshot at all, so a cancelled first import leaves nothing behind.
   */
  readonly discardUnbuilt: (snapshotId: string, codebaseId: string) => Effect.Effect<{ snapshot: boolean; codebase: boolean }>
  /** Replaces the snapshot's rows, makes it current and drops its stored archive, in one transaction. */
  readonly writeSnapshot: (snapshotId: string, codebaseId: string, rows: SnapshotRows, artifacts: ReadonlyArray<ArtifactRow>, stats: unknown) => Effect.Effect<void>
}>()("engram/codebases/CodebaseStore") {
  static readonly layer = Layer.effect(
    CodebaseStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const codebase = (query: Effect.Effect<ReadonlyArray<any>, unknown>) =>
        query.pipe(Effect.orDie, Effect.map((rows) => Option.fromNullishOr(rows[0] as CodebaseRecord | undefined)))

      const inBatches = <A>(rows: ReadonlyArray<A>, write: (batch: string) => Effect.Effect<unknown, unknown>) =>
        Effect.forEach(
          Array.from({ length: Math.ceil(rows.length / batchRows) }, (_, index) => rows.slice(index * batchRows, (index + 1) * batchRows)),
          (batch) => write(JSON.stringify(batch)),
          { discard: true }
        )

      const writeSnapshot = Effect.fn("CodebaseStore.writeSnapshot")(function*(
        snapshotId: string, codebaseId: string, rows: SnapshotRows, artifacts: ReadonlyArray<ArtifactRow>, stats: unknown
      ) {
        for (const table of ["codebase_files", "codebase_symbols", "codebase_edges", "codebase_chunks", "codebase_artifacts"]) {
          yield* sql`DELETE FROM ${sql(table)} WHERE snapshot_id = ${snapshotId}`
        }
        yield* inBatches(rows.files.map((file) => ({ ...file, parse: file.parse })), (batch) => sql`
          INSERT INTO codebase_files (snapshot_id, path, language, status, reason, file_role, content_hash, change_kind, line_count, chunk_count, parse)
          SELECT ${snapshotId}, x.path, x.language, x.status, x.reason, x.role, x."contentHash", x."changeKind", x."lineCount", x."chunkCount", x.parse
          FROM json_to_recordset(${batch}::json) AS x(path text, language text, status text, reason text, role text,
            "contentHash" text, "changeKind" text, "lineCount" int, "chunkCount" int, parse jsonb)`)
        yield* inBatches(rows.symbols, (batch) => sql`
          INSERT INTO codebase_symbols (id, snapshot_id, path, language, name, kind, container, fq_name, exported, start_line, end_line, complexity, pagerank, fanin)
          SELECT x.id, ${snapshotId}, x.path, x.language, x.name, x.kind, x.container, x."fqName", x.exported, x."startLine", x."endLine", x.complexity, x.pagerank, x.fanin
          FROM json_to_recordset(${batch}::json) AS x(id text, path text, language text, name text, kind text, container text,
            "fqName" text, exported boolean, "startLine" int, "endLine" int, complexity int, pagerank real, fanin int)`)
        yield* inBatches(rows.edges, (batch) => sql`
          INSERT INTO codebase_edges (snapshot_id, edge_type, from_path, to_path, from_symbol, to_symbol, target_ref, label)
          SELECT ${snapshotId}, x."edgeType", x."fromPath", x."toPath", x."fromSymbol", x."toSymbol", x."targetRef", x.label
          FROM json_to_recordset(${batch}::json) AS x("edgeType" text, "fromPath" text, "toPath" text, "fromSymbol" text,
            "toSymbol" text, "targetRef" text, label text)`)
        yield* inBatches(rows.chunks, (batch) => sql`
          INSERT INTO codebase_chunks (id, snapshot_id, chunk_key, path, language, kind, label, container, parent_symbol,
            parent_fq_name, start_line, end_line, content_text, content_hash, preview_text, parse_confidence, cluster_id,
            cluster_label, route_target, route_source, auto_route_reason, change_kind, related_count, significance_score,
            significance_components, file_role, complexity_score, safety_tags, pagerank_centrality, fanin_count)
          SELECT x.id, ${snapshotId}, x."chunkKey", x.path, x.language, x.kind, x.label, x.container, x."parentSymbol",
            x."parentFqName", x."startLine", x."endLine", x."contentText", x."contentHash", x."previewText", x."parseConfidence",
            x."clusterId", x."clusterLabel", x."routeTarget", x."routeSource", x."autoRouteReason", x."changeKind",
            x."relatedCount", x."significanceScore", x."significanceComponents", x."fileRole", x."complexityScore",
            ARRAY(SELECT jsonb_array_elements_text(x."safetyTags")), x."pagerankCentrality", x."faninCount"
          FROM json_to_recordset(${batch}::json) AS x(id text, "chunkKey" text, path text, language text, kind text, label text,
            container text, "parentSymbol" text, "parentFqName" text, "startLine" int, "endLine" int, "contentText" text,
            "contentHash" text, "previewText" text, "parseConfidence" real, "clusterId" text, "clusterLabel" text,
            "routeTarget" text, "routeSource" text, "autoRouteReason" text, "changeKind" text, "relatedCount" int,
            "significanceScore" real, "significanceComponents" jsonb, "fileRole" text, "complexityScore" real,
            "safetyTags" jsonb, "pagerankCentrality" real, "faninCount" int)`)
        yield* inBatches(artifacts, (batch) => sql`
          INSERT INTO codebase_artifacts (snapshot_id, kind, ref_id, rank, body)
          SELECT ${snapshotId}, x.kind, x."refId", x.rank, x.body
          FROM json_to_recordset(${batch}::json) AS x(kind text, "refId" text, rank int, body jsonb)
          ON CONFLICT DO NOTHING`)
        yield* sql`UPDATE codebase_snapshots SET status = 'review_required', stats = ${JSON.stringify(stats)}::jsonb,
          source_archive = NULL, error = NULL, updated_at = now() WHERE id = ${snapshotId}`
        yield* sql`UPDATE codebases SET current_snapshot_id = ${snapshotId}, updated_at = now() WHERE id = ${codebaseId}`
      }, (effect) => effect.pipe(sql.withTransaction, Effect.orDie))

      return CodebaseStore.of({
        find: (bankId, id) => codebase(sql`SELECT * FROM codebases WHERE bank_id = ${bankId} AND id = ${id}`),
        findByName: (bankId, sourceType, name) =>
          codebase(sql`SELECT * FROM codebases WHERE bank_id = ${bankId} AND source_type = ${sourceType} AND name = ${name}`),
        list: (bankId) =>
          sql`SELECT * FROM codebases WHERE bank_id = ${bankId} ORDER BY created_at, id`.pipe(
            Effect.orDie, Effect.map((rows) => rows as unknown as ReadonlyArray<CodebaseRecord>)),
        create: (record) =>
          sql`INSERT INTO codebases (id, bank_id, name, source_type, source_config)
            VALUES (${record.id}, ${record.bankId}, ${record.name}, ${record.sourceType}, ${JSON.stringify(record.sourceConfig)}::jsonb)`.pipe(
            Effect.asVoid, Effect.orDie),
        updateSource: (id, sourceConfig) =>
          sql`UPDATE codebases SET source_config = ${JSON.stringify(sourceConfig)}::jsonb, updated_at = now() WHERE id = ${id}`.pipe(
            Effect.asVoid, Effect.orDie),
        setTriage: (id, settings) =>
          sql`UPDATE codebases SET triage_settings = ${JSON.stringify(settings)}::jsonb, updated_at = now() WHERE id = ${id}`.pipe(
            Effect.asVoid, Effect.orDie),
        snapshot: (id) =>
          sql`SELECT id, codebase_id, bank_id, status, source_ref, source_commit_sha, previous_snapshot_id, stats, error,
              approved_at, created_at, updated_at FROM codebase_snapshots WHERE id = ${id}`.pipe(
            Effect.orDie, Effect.map((rows) => Option.fromNullishOr(rows[0] as unknown as SnapshotRecord | undefined))),
        createSnapshot: (snapshot) =>
          sql`INSERT INTO codebase_snapshots (id, codebase_id, bank_id, status, source_ref, source_commit_sha,
              previous_snapshot_id, source_archive, stats)
            VALUES (${snapshot.id}, ${snapshot.codebaseId}, ${snapshot.bankId}, 'pending', ${snapshot.sourceRef},
              ${snapshot.sourceCommitSha}, ${snapshot.previousSnapshotId}, ${snapshot.archive}, ${JSON.stringify(snapshot.stats)}::jsonb)`.pipe(
            Effect.asVoid, Effect.orDie),
        archive: (snapshotId) =>
          sql<{ sourceArchive: Uint8Array | null }>`SELECT source_archive FROM codebase_snapshots WHERE id = ${snapshotId}`.pipe(
            Effect.orDie, Effect.map((rows) => rows[0]?.sourceArchive ?? null)),
        setStatus: (snapshotId, status, extra = {}) =>
          sql`UPDATE codebase_snapshots SET status = ${status},
              stats = ${extra.stats === undefined ? sql`stats` : sql`${JSON.stringify(extra.stats)}::jsonb`},
              error = ${extra.error === undefined ? sql`error` : extra.error},
              approved_at = ${status === "approved" || status === "partially_approved" ? sql`now()` : sql`approved_at`},
              updated_at = now() WHERE id = ${snapshotId}`.pipe(Effect.asVoid, Effect.orDie),
        previousFiles: (snapshotId) =>
          snapshotId === null ? Effect.succeed(new Map()) :
          sql<{ path: string; contentHash: string; parse: FileParse | null }>`
            SELECT path, content_hash, parse FROM codebase_files WHERE snapshot_id = ${snapshotId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => new Map(rows.map((row) => [row.path, { contentHash: row.contentHash, parse: row.parse }])))),
        previousRoutes: (snapshotId) =>
          snapshotId === null ? Effect.succeed(new Map()) :
          sql<{ chunkKey: string; contentHash: string; routeTarget: string }>`
            SELECT chunk_key, content_hash, route_target FROM codebase_chunks WHERE snapshot_id = ${snapshotId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => new Map(rows.map((row) => [row.chunkKey, { contentHash: row.contentHash, routeTarget: row.routeTarget }])))),
        discardUnbuilt: (snapshotId, codebaseId) =>
          Effect.gen(function*() {
            const snapshots = yield* sql`DELETE FROM codebase_snapshots
              WHERE id = ${snapshotId} AND status IN ('pending', 'processing') RETURNING id`
            const codebases = yield* sql`DELETE FROM codebases c WHERE c.id = ${codebaseId} AND c.current_snapshot_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM codebase_snapshots s WHERE s.codebase_id = c.id) RETURNING id`
            return { snapshot: snapshots.length > 0, codebase: codebases.length > 0 }
          }).pipe(sql.withTransaction, Effect.orDie),
        writeSnapshot
      })
    })
  )
}
