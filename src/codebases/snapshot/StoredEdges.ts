/**
 * A snapshot's import and call edges live with the file they start from (`codebase_files.edges`, migration 0027):
 * a list of positional arrays per file instead of a row per edge, because the write is most of an import and an
 * edge row cost as much as a chunk row. Reads that need edges (impact, the chunk detail) take the snapshot's
 * whole list, which is what impact did before, and filter it here.
 */
import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { EdgeRow } from "./SnapshotRows.ts"

type PackedEdge = [
  type: "imports" | "calls",
  toPath: string | null,
  fromSymbol: string | null,
  toSymbol: string | null,
  targetRef: string,
  label: string | null
]

/** A call edge's label names its two symbols, an import's usually repeats its specifier: stored only when not. */
const derivedLabel = (
  edge: { edgeType: string; fromSymbol: string | null; toSymbol: string | null; targetRef: string }
) => edge.edgeType === "calls" ? `${edge.fromSymbol} -> ${edge.toSymbol}` : edge.targetRef

export const packEdges = (edges: ReadonlyArray<EdgeRow>): Array<PackedEdge> | null =>
  edges.length === 0 ? null : edges.map((edge) => [
    edge.edgeType,
    edge.toPath,
    edge.fromSymbol,
    edge.toSymbol,
    edge.targetRef,
    edge.label === derivedLabel(edge) ? null : edge.label
  ])

export const unpackEdges = (fromPath: string, stored: ReadonlyArray<PackedEdge>): Array<EdgeRow> =>
  stored.map(([edgeType, toPath, fromSymbol, toSymbol, targetRef, label]) => ({
    edgeType,
    fromPath,
    toPath,
    fromSymbol,
    toSymbol,
    targetRef,
    label: label ?? derivedLabel({ edgeType, fromSymbol, toSymbol, targetRef })
  }))

/** Every edge of a snapshot, in path order and, within a file, in the order the import found them. */
export const snapshotEdges = (sql: SqlClient.SqlClient, snapshotId: string) =>
  sql<{ path: string; edges: ReadonlyArray<PackedEdge> }>`SELECT path, edges FROM codebase_files
    WHERE snapshot_id = ${snapshotId} AND edges IS NOT NULL ORDER BY path`.pipe(
    Effect.orDie,
    Effect.map((rows) => rows.flatMap((row) => unpackEdges(row.path, row.edges)))
  )

const nullsLast = (a: string | null, b: string | null) =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1

/** The order reads list edges in: by type, then source file, then target file (unresolved targets last). */
export const byTypeAndPaths = (a: EdgeRow, b: EdgeRow) =>
  (a.edgeType < b.edgeType ? -1 : a.edgeType > b.edgeType ? 1 : 0) ||
  (a.fromPath < b.fromPath ? -1 : a.fromPath > b.fromPath ? 1 : 0) || nullsLast(a.toPath, b.toPath)
