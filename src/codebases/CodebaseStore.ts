/**
 * The codebase tables: codebases and snapshots (create, find, status), and the bulk write of a parsed snapshot
 * in one transaction (any rows a crashed earlier attempt left for the snapshot are replaced), through `bulkInsert`.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { ArtifactRow } from "./intel/Artifacts.ts"
import { unpackParse } from "./parse/StoredParse.ts"
import type { PreviousFile } from "./snapshot/SnapshotPlan.ts"
import { bulkInsert } from "./snapshot/BulkInsert.ts"
import { artifactColumns, chunkColumns, fileColumns } from "./snapshot/SnapshotColumns.ts"
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
  readonly stats: Record<string, unknown>
  readonly error: string | null
  readonly approvedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export class CodebaseStore extends Context.Service<CodebaseStore, {
  readonly find: (bankId: string, id: string) => Effect.Effect<Option.Option<CodebaseRecord>>
  readonly findByName: (
    bankId: string,
    sourceType: string,
    name: string
  ) => Effect.Effect<Option.Option<CodebaseRecord>>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<CodebaseRecord>>
  readonly create: (
    record: { id: string; bankId: string; name: string; sourceType: string; sourceConfig: unknown }
  ) => Effect.Effect<void>
  readonly updateSource: (id: string, sourceConfig: unknown) => Effect.Effect<void>
  readonly setTriage: (id: string, settings: unknown) => Effect.Effect<void>
  readonly snapshot: (id: string) => Effect.Effect<Option.Option<SnapshotRecord>>
  readonly createSnapshot: (snapshot: {
    id: string
    codebaseId: string
    bankId: string
    sourceRef: string | null
    sourceCommitSha: string | null
    previousSnapshotId: string | null
    archive: Uint8Array
    stats: unknown
  }) => Effect.Effect<void>
  readonly archive: (snapshotId: string) => Effect.Effect<Uint8Array | null>
  readonly setStatus: (
    snapshotId: string,
    status: string,
    extra?: { stats?: unknown; error?: string | null }
  ) => Effect.Effect<void>
  readonly previousFiles: (snapshotId: string | null) => Effect.Effect<Map<string, PreviousFile>>
  readonly previousRoutes: (
    snapshotId: string | null
  ) => Effect.Effect<Map<string, { contentHash: string; routeTarget: string }>>
  /**
   * Removes a snapshot that was never built (pending or processing; a built one stays), and its codebase when that
   * is left with no snapshot at all, so a cancelled first import leaves nothing behind.
   */
  readonly discardUnbuilt: (
    snapshotId: string,
    codebaseId: string
  ) => Effect.Effect<{ snapshot: boolean; codebase: boolean }>
  /** Replaces the snapshot's rows, makes it current and drops its stored archive, in one transaction. */
  readonly writeSnapshot: (
    snapshotId: string,
    codebaseId: string,
    rows: SnapshotRows,
    artifacts: ReadonlyArray<ArtifactRow>,
    stats: unknown
  ) => Effect.Effect<void>
}>()("engram/codebases/CodebaseStore") {
  static readonly layer = Layer.effect(
    CodebaseStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const codebase = (query: Effect.Effect<ReadonlyArray<CodebaseRecord>, unknown>) =>
        query.pipe(Effect.orDie, Effect.map((rows) => Option.fromNullishOr(rows[0])))

      const writeSnapshot = Effect.fn("CodebaseStore.writeSnapshot")(function*(
        snapshotId: string,
        codebaseId: string,
        rows: SnapshotRows,
        artifacts: ReadonlyArray<ArtifactRow>,
        stats: unknown
      ) {
        for (const table of ["codebase_files", "codebase_chunks", "codebase_artifacts"]) {
          yield* sql`DELETE FROM ${sql(table)} WHERE snapshot_id = ${snapshotId}`
        }
        const snapshot = { snapshot_id: snapshotId }
        yield* bulkInsert(sql, "codebase_files", snapshot, fileColumns, rows.files)
        yield* bulkInsert(sql, "codebase_chunks", snapshot, chunkColumns, rows.chunks)
        yield* bulkInsert(sql, "codebase_artifacts", snapshot, artifactColumns, artifacts, {
          onConflictDoNothing: true
        })
        yield* sql`UPDATE codebase_snapshots SET status = 'review_required', stats = ${JSON.stringify(stats)}::jsonb,
          source_archive = NULL, error = NULL, updated_at = now() WHERE id = ${snapshotId}`
        yield* sql`UPDATE codebases SET current_snapshot_id = ${snapshotId}, updated_at = now() WHERE id = ${codebaseId}`
      }, (effect) => effect.pipe(sql.withTransaction, Effect.orDie))

      return CodebaseStore.of({
        find: (bankId, id) =>
          codebase(sql<CodebaseRecord>`SELECT * FROM codebases WHERE bank_id = ${bankId} AND id = ${id}`),
        findByName: (bankId, sourceType, name) =>
          codebase(
            sql<
              CodebaseRecord
            >`SELECT * FROM codebases WHERE bank_id = ${bankId} AND source_type = ${sourceType} AND name = ${name}`
          ),
        list: (bankId) =>
          sql<CodebaseRecord>`SELECT * FROM codebases WHERE bank_id = ${bankId} ORDER BY created_at, id`.pipe(
            Effect.orDie
          ),
        create: (record) =>
          sql`INSERT INTO codebases (id, bank_id, name, source_type, source_config)
            VALUES (${record.id}, ${record.bankId}, ${record.name}, ${record.sourceType}, ${
            JSON.stringify(record.sourceConfig)
          }::jsonb)`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        updateSource: (id, sourceConfig) =>
          sql`UPDATE codebases SET source_config = ${
            JSON.stringify(sourceConfig)
          }::jsonb, updated_at = now() WHERE id = ${id}`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        setTriage: (id, settings) =>
          sql`UPDATE codebases SET triage_settings = ${
            JSON.stringify(settings)
          }::jsonb, updated_at = now() WHERE id = ${id}`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        snapshot: (id) =>
          sql<
            SnapshotRecord
          >`SELECT id, codebase_id, bank_id, status, source_ref, source_commit_sha, previous_snapshot_id, stats, error,
              approved_at, created_at, updated_at FROM codebase_snapshots WHERE id = ${id}`.pipe(
            Effect.orDie,
            Effect.map((rows) => Option.fromNullishOr(rows[0]))
          ),
        createSnapshot: (snapshot) =>
          sql`INSERT INTO codebase_snapshots (id, codebase_id, bank_id, status, source_ref, source_commit_sha,
              previous_snapshot_id, source_archive, stats)
            VALUES (${snapshot.id}, ${snapshot.codebaseId}, ${snapshot.bankId}, 'pending', ${snapshot.sourceRef},
              ${snapshot.sourceCommitSha}, ${snapshot.previousSnapshotId}, ${snapshot.archive}, ${
            JSON.stringify(snapshot.stats)
          }::jsonb)`.pipe(
            Effect.asVoid,
            Effect.orDie
          ),
        archive: (snapshotId) =>
          sql<
            { sourceArchive: Uint8Array | null }
          >`SELECT source_archive FROM codebase_snapshots WHERE id = ${snapshotId}`.pipe(
            Effect.orDie,
            Effect.map((rows) => rows[0]?.sourceArchive ?? null)
          ),
        setStatus: (snapshotId, status, extra = {}) =>
          sql`UPDATE codebase_snapshots SET status = ${status},
              stats = ${extra.stats === undefined ? sql`stats` : sql`${JSON.stringify(extra.stats)}::jsonb`},
              error = ${extra.error === undefined ? sql`error` : extra.error},
              approved_at = ${status === "approved" || status === "partially_approved" ? sql`now()` : sql`approved_at`},
              updated_at = now() WHERE id = ${snapshotId}`.pipe(Effect.asVoid, Effect.orDie),
        previousFiles: (snapshotId) =>
          snapshotId === null ?
            Effect.succeed(new Map()) :
            sql<{ path: string; contentHash: string; parse: unknown }>`
            SELECT path, content_hash, parse FROM codebase_files WHERE snapshot_id = ${snapshotId}`.pipe(
              Effect.orDie,
              Effect.map((rows) =>
                new Map(rows.map((row) => [row.path, { contentHash: row.contentHash, parse: unpackParse(row.parse) }]))
              )
            ),
        previousRoutes: (snapshotId) =>
          snapshotId === null ?
            Effect.succeed(new Map()) :
            sql<{ chunkKey: string; contentHash: string; routeTarget: string }>`
            SELECT chunk_key, content_hash, route_target FROM codebase_chunks WHERE snapshot_id = ${snapshotId}`.pipe(
              Effect.orDie,
              Effect.map((rows) =>
                new Map(
                  rows.map((row) => [row.chunkKey, { contentHash: row.contentHash, routeTarget: row.routeTarget }])
                )
              )
            ),
        discardUnbuilt: (snapshotId, codebaseId) =>
          Effect.gen(function*() {
            const snapshots = yield* sql`DELETE FROM codebase_snapshots
              WHERE id = ${snapshotId} AND status IN ('pending', 'processing') RETURNING id`
            const codebases =
              yield* sql`DELETE FROM codebases c WHERE c.id = ${codebaseId} AND c.current_snapshot_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM codebase_snapshots s WHERE s.codebase_id = c.id) RETURNING id`
            return { snapshot: snapshots.length > 0, codebase: codebases.length > 0 }
          }).pipe(sql.withTransaction, Effect.orDie),
        writeSnapshot
      })
    })
  )
}
