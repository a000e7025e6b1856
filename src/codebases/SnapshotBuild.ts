/**
 * The `codebase_import` task: reads a pending snapshot's stored source, plans it against the previous snapshot,
 * parses only the files that need it on the parse workers, assembles chunks, graph and intelligence, and writes
 * everything in one transaction. Idempotent: a snapshot already built answers its stats again; a crash mid-way
 * re-runs from the stored source. A failure marks the snapshot `failed` (the codebase keeps its previous one).
 */
import { Clock, Effect, Option } from "effect"
import type { OperationRecord } from "../bank/OperationStore.ts"
import { TaskFailure } from "../bank/TaskRegistry.ts"
import type { CodebaseStore } from "./CodebaseStore.ts"
import { buildArtifacts } from "./intel/Artifacts.ts"
import { defaultTriageSettings, type TriageSettings } from "./intel/Significance.ts"
import type { FileParse } from "./parse/SyntaxExtractor.ts"
import { assemblingSnapshot } from "./snapshot/SnapshotAssembly.ts"
import { runSliced } from "../brain/Sliced.ts"
import { planSnapshot } from "./snapshot/SnapshotPlan.ts"
import type { SnapshotRows } from "./snapshot/SnapshotRows.ts"
import { selectEntries } from "./source/ArchiveSelection.ts"
import type { SourceHandoff } from "./source/SourceHandoff.ts"
import { type ArchiveEntry, type ArchiveLimits, readZip } from "../archives/ZipReader.ts"
import type { CodeParser } from "./workers/ParseWorkers.ts"

export const importTask = "codebase_import"

export interface ImportPayload {
  readonly codebase_id: string
  readonly snapshot_id: string
  readonly full_rebuild?: boolean
}

export const triageOf = (stored: Record<string, unknown> | null): TriageSettings => ({
  ...defaultTriageSettings,
  ...(stored ?? {})
} as TriageSettings)

/** The import settings a codebase keeps in `source_config`, as the (validated) import request wrote them. */
export interface StoredSource {
  readonly virtual_path?: string
  readonly root_path?: string | null
  readonly include_globs?: ReadonlyArray<string>
  readonly exclude_globs?: ReadonlyArray<string>
}

/** The files a snapshot's stored source holds: the single uploaded file, or the selected archive entries. */
export const sourceEntries = (
  sourceType: string,
  sourceConfig: StoredSource,
  bytes: Uint8Array,
  limits: ArchiveLimits
) =>
  sourceType === "file"
    ? Effect.succeed<Array<ArchiveEntry>>([{ path: String(sourceConfig["virtual_path"]), bytes }])
    : readZip(bytes, limits).pipe(Effect.flatMap((entries) =>
      selectEntries(entries, {
        rootPath: sourceConfig["root_path"] ?? null,
        includeGlobs: sourceConfig["include_globs"] ?? [],
        excludeGlobs: sourceConfig["exclude_globs"] ?? []
      })
    ))

/** Milliseconds of each step of a build, kept in the snapshot's stats (the benchmark reads them). */
interface StepTimings {
  read: number
  plan: number
  parse: number
  assemble: number
  artifacts: number
  total: number
}

const statsOf = (
  rows: SnapshotRows,
  counts: { reparsed: number; reused: number; deleted: number; timings: StepTimings }
) => {
  const byStatus = (status: string) => rows.files.filter((file) => file.status === status).length
  const changes = (kind: string) => rows.files.filter((file) => file.changeKind === kind).length
  const review = { unrouted: 0, memory: 0, research: 0, dismissed: 0 } as Record<string, number>
  const sources: Record<string, number> = {}
  const roles: Record<string, number> = {}
  const hints: Record<string, number> = { dismiss: 0, memory: 0, review: 0 }
  let scoreSum = 0
  let scoreMax = 0
  for (const chunk of rows.chunks) {
    review[chunk.routeTarget] = (review[chunk.routeTarget] ?? 0) + 1
    sources[chunk.routeSource] = (sources[chunk.routeSource] ?? 0) + 1
    roles[chunk.fileRole] = (roles[chunk.fileRole] ?? 0) + 1
    const hint = String(chunk.significanceComponents["route_hint"])
    hints[hint] = (hints[hint] ?? 0) + 1
    scoreSum += chunk.significanceScore
    scoreMax = Math.max(scoreMax, chunk.significanceScore)
  }
  const candidates = rows.files.filter((file) => file.status === "indexed" || file.reason === "parse_error").length
  const lines = rows.files.reduce((sum, file) => sum + file.lineCount, 0)
  return {
    total_files: rows.files.length,
    indexed_files: byStatus("indexed"),
    retained_files: byStatus("retained"),
    manifest_only_files: byStatus("manifest_only"),
    excluded_files: byStatus("excluded"),
    symbol_count: rows.symbols.length,
    edge_count: rows.edges.length,
    import_edge_count: rows.edges.filter((edge) => edge.edgeType === "imports").length,
    call_edge_count: rows.edges.filter((edge) => edge.edgeType === "calls").length,
    added_files: changes("added"),
    changed_files: changes("modified"),
    unchanged_files: changes("unchanged"),
    deleted_files: counts.deleted,
    reparsed_files: counts.reparsed,
    reused_parses: counts.reused,
    total_lines: lines,
    chunk_count: rows.chunks.length,
    cluster_count: rows.clusterCount,
    related_chunk_count: rows.chunks.filter((chunk) => chunk.relatedCount > 0).length,
    parse_coverage: candidates === 0 ? 0 : Number((byStatus("indexed") / candidates).toFixed(4)),
    review_counts: review,
    review_route_sources: sources,
    code_intel: {
      route_counts: hints,
      score_avg: rows.chunks.length === 0 ? 0 : Number((scoreSum / rows.chunks.length).toFixed(4)),
      score_max: scoreMax,
      file_role_counts: roles,
      scored_chunks: rows.chunks.length
    },
    timings_ms: counts.timings
  }
}

export const runImport = (
  store: typeof CodebaseStore.Service,
  parser: CodeParser,
  handoff: SourceHandoff,
  limits: ArchiveLimits,
  maxAttempts: number
) =>
(operation: OperationRecord) =>
  Effect.gen(function*() {
    const payload = operation.payload as ImportPayload
    const started = yield* Clock.currentTimeMillis
    const snapshot = yield* store.snapshot(payload.snapshot_id)
    if (Option.isNone(snapshot)) {
      return yield* new TaskFailure({
        message: "the snapshot no longer exists (a cancelled import removes it; import again)",
        retryable: false
      })
    }
    if (!["pending", "processing"].includes(snapshot.value.status)) return snapshot.value.stats
    const found = yield* store.find(snapshot.value.bankId, payload.codebase_id)
    if (Option.isNone(found)) {
      return yield* new TaskFailure({ message: "the codebase no longer exists", retryable: false })
    }
    const codebase = found.value
    // The request's checked files when it ran in this process moments ago; the stored archive otherwise.
    const handed = handoff.take(snapshot.value.id)
    const bytes = handed === undefined ? yield* store.archive(snapshot.value.id) : null
    if (handed === undefined && bytes === null) {
      return yield* new TaskFailure({ message: "the snapshot's source is gone", retryable: false })
    }
    yield* store.setStatus(snapshot.value.id, "processing")

    const readStarted = yield* Clock.currentTimeMillis
    const entries = handed ??
      (yield* sourceEntries(codebase.sourceType, codebase.sourceConfig as StoredSource, bytes!, limits).pipe(
        Effect.mapError((refused) => new TaskFailure({ message: refused.message, retryable: false }))
      ))
    const previousFiles = yield* store.previousFiles(snapshot.value.previousSnapshotId)
    const planStarted = yield* Clock.currentTimeMillis
    const plan = planSnapshot(entries, previousFiles, payload.full_rebuild === true)
    const parseStarted = yield* Clock.currentTimeMillis
    const outcomes = yield* parser.parse(plan.toParse).pipe(
      Effect.mapError((failure) => new TaskFailure({ message: failure.message, retryable: true }))
    )
    const assembleStarted = yield* Clock.currentTimeMillis
    const parses = new Map<string, FileParse>()
    const failures = new Map<string, string>()
    for (const file of plan.files) if (file.reusedParse !== null) parses.set(file.path, file.reusedParse)
    for (const outcome of outcomes) {
      if (outcome.ok) parses.set(outcome.path, outcome.parse)
      else failures.set(outcome.path, outcome.message)
    }
    const texts = new Map(
      plan.files.filter((file) => file.text !== null).map((file) => [file.path, file.text!.split("\n")])
    )
    const previousRoutes = yield* store.previousRoutes(snapshot.value.previousSnapshotId)
    // In slices with a turn of the event loop between them: other requests are served while a large tree assembles.
    const rows = yield* runSliced(
      assemblingSnapshot({
        snapshotId: snapshot.value.id,
        files: plan.files,
        parses,
        parseFailures: failures,
        deletedPaths: plan.deletedPaths,
        previousRoutes,
        settings: triageOf(codebase.triageSettings),
        lines: texts
      }),
      Effect.yieldNow
    )
    const artifactsStarted = yield* Clock.currentTimeMillis
    const artifacts = buildArtifacts(rows.files, texts, rows.symbols, rows.edges, rows.chunks)
    const stats = {
      source_from: handed === undefined ? "stored_archive" : "request",
      ...statsOf(rows, {
        reparsed: plan.toParse.length,
        reused: plan.files.filter((file) => file.reusedParse !== null).length,
        deleted: plan.deletedPaths.length,
        timings: {
          read: planStarted - readStarted,
          plan: parseStarted - planStarted,
          parse: assembleStarted - parseStarted,
          assemble: artifactsStarted - assembleStarted,
          artifacts: (yield* Clock.currentTimeMillis) - artifactsStarted,
          total: (yield* Clock.currentTimeMillis) - started
        }
      }),
      code_intel_artifact_counts: {
        symbol_cards: artifacts.filter((artifact) => artifact.kind === "symbol_card").length,
        module_briefs: artifacts.filter((artifact) => artifact.kind === "module_brief").length,
        repo_map: 1
      },
      deleted_paths: plan.deletedPaths.slice(0, 100),
      diagnostics: diagnostics(rows, failures)
    }
    const writeStarted = yield* Clock.currentTimeMillis
    yield* store.writeSnapshot(snapshot.value.id, codebase.id, rows, artifacts, stats)
    const timed = {
      ...stats,
      timings_ms: { ...stats.timings_ms, write: (yield* Clock.currentTimeMillis) - writeStarted }
    }
    yield* store.setStatus(snapshot.value.id, "review_required", { stats: timed })
    return timed
  }).pipe(
    // The snapshot fails with the operation: at once for a permanent failure, on the last attempt otherwise.
    Effect.tapError((failure) =>
      failure.retryable && operation.attempts < maxAttempts
        ? Effect.void
        : store.setStatus((operation.payload as ImportPayload).snapshot_id, "failed", { error: failure.message })
    )
  )

/** The ten most common reasons files were not deep-parsed, for the review summary. */
const diagnostics = (rows: SnapshotRows, failures: ReadonlyMap<string, string>) => {
  const counts = new Map<string, number>()
  for (const file of rows.files) if (file.reason !== null) counts.set(file.reason, (counts.get(file.reason) ?? 0) + 1)
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10)
    .map(([reason, count]) => ({
      reason,
      count,
      ...(reason === "parse_error" ? { examples: [...failures.keys()].slice(0, 5) } : {})
    }))
}
