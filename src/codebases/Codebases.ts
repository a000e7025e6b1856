/**
 * The codebase commands: import (zip, single file, git host), refresh, route, approve and triage settings. An
 * import checks and stores its source in the request (a hostile archive is refused with 400 before anything is
 * written) and queues a `codebase_import` operation that parses it; approval is a `codebase_approve` operation.
 * Reads live in `CodebaseReads`. Registers both task types when built.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import type { FileImportRequest, GitHostImportRequest, ZipImportRequest } from "../domain/Codebase.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskRegistry } from "../bank/TaskRegistry.ts"
import { approveTask, makeApprovalHandler } from "./Approval.ts"
import { type CodebaseRecord, CodebaseStore } from "./CodebaseStore.ts"
import { sha256 } from "./intel/Chunker.ts"
import { defaultTriageSettings, type TriageSettings } from "./intel/Significance.ts"
import { importTask, runImport, sourceEntries, triageOf } from "./SnapshotBuild.ts"
import { GitHostError, makeGitHostClient, parseRepoUrl } from "./source/GitHostClient.ts"
import { type ArchiveRefused, normalizeEntryPath } from "../archives/ZipReader.ts"
import { makeSourceHandoff } from "./source/SourceHandoff.ts"
import { makeParseWorkers } from "./workers/ParseWorkers.ts"

type IngestMode = "direct" | "retain"

export interface ImportOutcome {
  readonly codebase_id: string
  readonly snapshot_id: string
  readonly operation_id: string
  readonly status: string
  readonly changed_files: number
  readonly added_files: number
  readonly deleted_files: number
}

const reviewStatuses = ["review_required", "review_in_progress", "partially_approved"]

export class Codebases extends Context.Service<Codebases, {
  readonly importZip: (
    bankId: string,
    archive: Uint8Array,
    request: ZipImportRequest
  ) => Effect.Effect<ImportOutcome, ValidationError>
  readonly importFile: (
    bankId: string,
    filename: string,
    bytes: Uint8Array,
    request: FileImportRequest
  ) => Effect.Effect<ImportOutcome & { filename: string; virtual_path: string }, ValidationError>
  readonly importGitHost: (
    bankId: string,
    request: GitHostImportRequest
  ) => Effect.Effect<ImportOutcome & { resolved_commit_sha: string }, ValidationError | ServiceUnavailable>
  readonly refresh: (
    bankId: string,
    codebaseId: string,
    request: { ref?: string | null | undefined; full_rebuild?: boolean | undefined }
  ) => Effect.Effect<
    {
      snapshot_id: string | null
      operation_id: string | null
      status: string
      changed_files: number
      added_files: number
      deleted_files: number
      noop: boolean
    },
    NotFound | ValidationError | ServiceUnavailable
  >
  readonly route: (
    bankId: string,
    codebaseId: string,
    request: {
      item_ids: ReadonlyArray<string>
      target: string
      queue_memory_import?: boolean | undefined
      memory_ingest_mode?: IngestMode | undefined
    }
  ) => Effect.Effect<
    { snapshot_id: string; updated_count: number; operation_id: string | null },
    NotFound | ValidationError
  >
  readonly approve: (
    bankId: string,
    codebaseId: string,
    snapshotId: string | null,
    mode: IngestMode
  ) => Effect.Effect<{ snapshot_id: string; operation_id: string }, NotFound | ValidationError>
  readonly triage: (bankId: string, codebaseId: string) => Effect.Effect<TriageSettings, NotFound>
  readonly setTriage: (
    bankId: string,
    codebaseId: string,
    settings: Partial<TriageSettings>
  ) => Effect.Effect<TriageSettings, NotFound>
  readonly get: (bankId: string, codebaseId: string) => Effect.Effect<CodebaseRecord, NotFound>
}>()("engram/codebases/Codebases") {
  static readonly layer = Layer.effect(
    Codebases,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* CodebaseStore
      const banks = yield* Banks
      const operations = yield* Operations
      const registry = yield* TaskRegistry
      const config = yield* EngramConfig
      const settings = config.codebases
      const parser = yield* makeParseWorkers({ workers: settings.parseWorkers })
      const gitHost = makeGitHostClient(settings)

      const handoff = makeSourceHandoff({ maxBytes: 512 * 1024 * 1024, maxAgeMs: 10 * 60_000 })
      yield* registry.register(
        importTask,
        runImport(store, parser, handoff, settings.archive, config.operationMaxAttempts)
      )
      yield* registry.register(approveTask, yield* makeApprovalHandler)
      // A cancelled import must not leave a pending or half-built snapshot: the handler is stopped by then.
      yield* registry.onCancel(importTask, (operation) => {
        const payload = operation.payload as { codebase_id: string; snapshot_id: string }
        handoff.drop(payload.snapshot_id)
        return store.discardUnbuilt(payload.snapshot_id, payload.codebase_id).pipe(
          Effect.tap((removed) => Effect.logInfo("cancelled codebase import cleaned up", { ...payload, ...removed }))
        )
      })

      const get = (bankId: string, codebaseId: string) =>
        store.find(bankId, codebaseId).pipe(
          Effect.flatMap(
            Option.match({ onNone: () => Effect.fail(NotFound.of("codebase", codebaseId)), onSome: Effect.succeed })
          )
        )

      const refusedArchive = (field: string) => (refused: ArchiveRefused) =>
        ValidationError.single(field, `archive refused (${refused.reason}): ${refused.message}`)

      /** Checks the source, diffs it against the current snapshot, stores it and queues the parse. */
      const startSnapshot = Effect.fn("Codebases.startSnapshot")(function*(input: {
        bankId: string
        name: string
        sourceType: "zip" | "file" | "githost"
        sourceConfig: Record<string, unknown>
        bytes: Uint8Array
        refreshExisting: boolean
        sourceRef: string | null
        commitSha: string | null
        field: string
        existing?: CodebaseRecord
        fullRebuild?: boolean
      }) {
        const entries = yield* sourceEntries(input.sourceType, input.sourceConfig, input.bytes, settings.archive).pipe(
          Effect.mapError(refusedArchive(input.field))
        )
        if (entries.length === 0) {
          return yield* ValidationError.single(
            input.field,
            "no files remain after root_path and the include/exclude globs"
          )
        }
        yield* banks.ensure(input.bankId)
        let codebase = input.existing ??
          Option.getOrUndefined(yield* store.findByName(input.bankId, input.sourceType, input.name))
        if (codebase !== undefined && input.existing === undefined && !input.refreshExisting) {
          return yield* ValidationError.single(
            "name",
            `codebase '${input.name}' already exists; use refresh_existing=true to import a new snapshot`
          )
        }
        if (codebase === undefined) {
          const id = crypto.randomUUID()
          yield* store.create({
            id,
            bankId: input.bankId,
            name: input.name,
            sourceType: input.sourceType,
            sourceConfig: input.sourceConfig
          })
          codebase = Option.getOrThrow(yield* store.find(input.bankId, id))
        } else {
          yield* store.updateSource(codebase.id, input.sourceConfig)
        }
        const previous = yield* store.previousFiles(codebase.currentSnapshotId)
        const present = new Set(entries.map((entry) => entry.path))
        let added = 0
        let changed = 0
        for (const entry of entries) {
          const before = previous.get(entry.path)
          if (before === undefined) added++
          else if (before.contentHash !== sha256(entry.bytes)) changed++
        }
        const deleted = [...previous.keys()].filter((path) => !present.has(path)).length
        const snapshotId = crypto.randomUUID()
        yield* store.createSnapshot({
          id: snapshotId,
          codebaseId: codebase.id,
          bankId: input.bankId,
          sourceRef: input.sourceRef,
          sourceCommitSha: input.commitSha,
          previousSnapshotId: codebase.currentSnapshotId,
          archive: input.bytes,
          stats: { added_files: added, changed_files: changed, deleted_files: deleted }
        })
        handoff.put(snapshotId, entries)
        // Parse workers start now, while the operation is queued, so the import does not wait for them.
        yield* parser.warm
        const operation = yield* operations.submit({
          bankId: input.bankId,
          taskType: importTask,
          payload: { codebase_id: codebase.id, snapshot_id: snapshotId, full_rebuild: input.fullRebuild === true },
          itemsCount: entries.length
        })
        return {
          codebase_id: codebase.id,
          snapshot_id: snapshotId,
          operation_id: operation.id,
          status: "pending",
          changed_files: changed,
          added_files: added,
          deleted_files: deleted
        }
      })

      const importZip = Effect.fn("Codebases.importZip")(
        function*(bankId: string, archive: Uint8Array, request: ZipImportRequest) {
          if (archive.byteLength > settings.maxArchiveBytes) {
            return yield* ValidationError.single(
              "archive",
              `is ${archive.byteLength} bytes; at most ${settings.maxArchiveBytes} are accepted`
            )
          }
          return yield* startSnapshot({
            bankId,
            name: request.name,
            sourceType: "zip",
            bytes: archive,
            field: "archive",
            sourceConfig: {
              root_path: request.root_path ?? null,
              include_globs: request.include_globs ?? [],
              exclude_globs: request.exclude_globs ?? []
            },
            refreshExisting: request.refresh_existing === true,
            sourceRef: request.name,
            commitSha: null
          })
        }
      )

      const importFile = Effect.fn("Codebases.importFile")(
        function*(bankId: string, filename: string, bytes: Uint8Array, request: FileImportRequest) {
          if (bytes.byteLength === 0) return yield* ValidationError.single("file", "is empty")
          if (bytes.byteLength > settings.archive.maxFileBytes) {
            return yield* ValidationError.single(
              "file",
              `is ${bytes.byteLength} bytes; at most ${settings.archive.maxFileBytes} are accepted`
            )
          }
          const virtualPath = request.virtual_path ?? filename
          const normalized = normalizeEntryPath(virtualPath)
          if (typeof normalized !== "string" || normalized === "") {
            return yield* ValidationError.single(
              "virtual_path",
              typeof normalized === "string" ? "is empty" : normalized.message
            )
          }
          const outcome = yield* startSnapshot({
            bankId,
            name: request.name,
            sourceType: "file",
            bytes,
            field: "file",
            sourceConfig: { filename, virtual_path: normalized },
            refreshExisting: request.refresh_existing === true,
            sourceRef: filename,
            commitSha: null
          })
          return { ...outcome, filename, virtual_path: normalized }
        }
      )

      const gitHostFailure = (error: GitHostError) =>
        error.status === 400
          ? ValidationError.single("repo", error.message)
          : new ServiceUnavailable({ detail: error.message })

      const importGitHost = Effect.fn("Codebases.importGitHost")(
        function*(bankId: string, request: GitHostImportRequest) {
          const fromUrl = request.repo_url ? parseRepoUrl(request.repo_url) : null
          if (request.repo_url && fromUrl === null) {
            return yield* ValidationError.single("repo_url", "is not a git host repository URL")
          }
          const owner = request.owner ?? fromUrl?.owner
          const repo = request.repo ?? fromUrl?.repo
          if (!owner || !repo) return yield* ValidationError.single("repo", "owner and repo (or repo_url) are required")
          if (!/^[\w.-]+$/.test(owner) || !/^[\w.-]+$/.test(repo)) {
            return yield* ValidationError.single(
              "repo",
              "owner and repo may hold letters, digits, '.', '_' and '-' only"
            )
          }
          const ref = request.ref ?? fromUrl?.ref ?? null
          const resolved = yield* gitHost.resolveCommit({ owner, repo }, ref).pipe(Effect.mapError(gitHostFailure))
          const archive = yield* gitHost.downloadArchive({ owner, repo }, resolved.sha).pipe(
            Effect.mapError(gitHostFailure)
          )
          const outcome = yield* startSnapshot({
            bankId,
            name: `${owner}/${repo}`,
            sourceType: "githost",
            bytes: archive,
            field: "archive",
            sourceConfig: {
              owner,
              repo,
              repo_url: request.repo_url ?? null,
              ref: ref,
              root_path: request.root_path ?? null,
              include_globs: request.include_globs ?? [],
              exclude_globs: request.exclude_globs ?? []
            },
            refreshExisting: request.refresh_existing === true,
            sourceRef: resolved.ref,
            commitSha: resolved.sha
          })
          return { ...outcome, resolved_commit_sha: resolved.sha }
        }
      )

      const refresh = Effect.fn("Codebases.refresh")(function*(
        bankId: string,
        codebaseId: string,
        request: { ref?: string | null | undefined; full_rebuild?: boolean | undefined }
      ) {
        const codebase = yield* get(bankId, codebaseId)
        if (codebase.sourceType !== "githost") {
          return yield* ValidationError.single(
            "codebase_id",
            "refresh applies to git-host codebases; re-import a zip or file with refresh_existing=true"
          )
        }
        const config = codebase.sourceConfig
        const repo = { owner: String(config["owner"]), repo: String(config["repo"]) }
        const ref = request.ref ?? (typeof config["ref"] === "string" ? config["ref"] : null)
        const resolved = yield* gitHost.resolveCommit(repo, ref).pipe(Effect.mapError(gitHostFailure))
        const current = codebase.currentSnapshotId === null
          ? Option.none()
          : yield* store.snapshot(codebase.currentSnapshotId)
        if (Option.isSome(current) && current.value.sourceCommitSha === resolved.sha && request.full_rebuild !== true) {
          return {
            snapshot_id: current.value.id,
            operation_id: null,
            status: "completed",
            changed_files: 0,
            added_files: 0,
            deleted_files: 0,
            noop: true
          }
        }
        const archive = yield* gitHost.downloadArchive(repo, resolved.sha).pipe(Effect.mapError(gitHostFailure))
        const outcome = yield* startSnapshot({
          bankId,
          name: codebase.name,
          sourceType: "githost",
          bytes: archive,
          field: "archive",
          sourceConfig: { ...config, ref },
          refreshExisting: true,
          sourceRef: resolved.ref,
          commitSha: resolved.sha,
          existing: codebase,
          fullRebuild: request.full_rebuild === true
        })
        return { ...outcome, noop: false }
      })

      const approve = Effect.fn("Codebases.approve")(
        function*(bankId: string, codebaseId: string, snapshotId: string | null, mode: IngestMode) {
          const codebase = yield* get(bankId, codebaseId)
          const id = snapshotId ?? codebase.currentSnapshotId
          if (id === null) {
            return yield* ValidationError.single("snapshot_id", "the codebase has no parsed snapshot yet")
          }
          const snapshot = yield* store.snapshot(id)
          if (Option.isNone(snapshot) || snapshot.value.codebaseId !== codebaseId) {
            return yield* NotFound.of("snapshot", id)
          }
          if (snapshot.value.status === "approved") {
            return yield* ValidationError.single("snapshot_id", `snapshot '${id}' is already approved`)
          }
          if (!reviewStatuses.includes(snapshot.value.status)) {
            return yield* ValidationError.single(
              "snapshot_id",
              `snapshot '${id}' is ${snapshot.value.status}; only a parsed snapshot under review can be approved`
            )
          }
          const memory = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM codebase_chunks
          WHERE snapshot_id = ${id} AND route_target = 'memory'`.pipe(Effect.orDie)
          if ((memory[0]?.count ?? 0) === 0) {
            return yield* ValidationError.single("snapshot_id", "route at least one chunk to memory before approving")
          }
          const operation = yield* operations.submit({
            bankId,
            taskType: approveTask,
            payload: { codebase_id: codebaseId, snapshot_id: id, memory_ingest_mode: mode },
            itemsCount: memory[0]?.count ?? 0
          })
          return { snapshot_id: id, operation_id: operation.id }
        }
      )

      const route = Effect.fn("Codebases.route")(function*(
        bankId: string,
        codebaseId: string,
        request: {
          item_ids: ReadonlyArray<string>
          target: string
          queue_memory_import?: boolean | undefined
          memory_ingest_mode?: IngestMode | undefined
        }
      ) {
        const codebase = yield* get(bankId, codebaseId)
        const snapshotId = codebase.currentSnapshotId
        if (snapshotId === null) {
          return yield* ValidationError.single("item_ids", "the codebase has no parsed snapshot yet")
        }
        const ids = [...new Set(request.item_ids)]
        const prior = yield* sql<
          { id: string; routeTarget: string; routeSource: string | null; autoRouteReason: string | null }
        >`
          SELECT id, route_target, route_source, auto_route_reason FROM codebase_chunks
          WHERE snapshot_id = ${snapshotId} AND id IN ${sql.in(ids)}`.pipe(Effect.orDie)
        const known = new Set(prior.map((row) => row.id))
        const unknown = ids.filter((id) => !known.has(id))
        if (unknown.length > 0) {
          return yield* ValidationError.single(
            "item_ids",
            `not chunks of the current snapshot: ${unknown.slice(0, 5).join(", ")}`
          )
        }
        const overrides = prior.filter((row) =>
          row.routeTarget !== request.target && (row.routeSource ?? "").startsWith("auto_triage")
        )
        yield* Effect.gen(function*() {
          yield* sql`UPDATE codebase_chunks SET route_target = ${request.target}, route_source = 'manual'
            WHERE snapshot_id = ${snapshotId} AND id IN ${sql.in(ids)}`
          for (const row of overrides) {
            yield* sql`INSERT INTO codebase_triage_overrides (id, codebase_id, snapshot_id, chunk_id, prior_route, prior_reason, new_route)
              VALUES (${crypto.randomUUID()}, ${codebaseId}, ${snapshotId}, ${row.id}, ${row.routeTarget}, ${row.autoRouteReason}, ${request.target})`
          }
          const routed = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM codebase_chunks
            WHERE snapshot_id = ${snapshotId} AND route_target <> 'unrouted'`
          yield* sql`UPDATE codebase_snapshots SET status = ${
            (routed[0]?.count ?? 0) > 0 ? "review_in_progress" : "review_required"
          },
            updated_at = now() WHERE id = ${snapshotId} AND status IN ('review_required', 'review_in_progress', 'approved', 'partially_approved')`
        }).pipe(sql.withTransaction, Effect.orDie)
        const queued = request.target === "memory" && request.queue_memory_import === true
          ? yield* approve(bankId, codebaseId, snapshotId, request.memory_ingest_mode ?? "direct")
          : null
        return { snapshot_id: snapshotId, updated_count: ids.length, operation_id: queued?.operation_id ?? null }
      })

      const triage = (bankId: string, codebaseId: string) =>
        get(bankId, codebaseId).pipe(Effect.map((codebase) => triageOf(codebase.triageSettings)))

      const setTriage = Effect.fn("Codebases.setTriage")(
        function*(bankId: string, codebaseId: string, body: Partial<TriageSettings>) {
          yield* get(bankId, codebaseId)
          const next: TriageSettings = { ...defaultTriageSettings, ...body }
          yield* store.setTriage(codebaseId, next)
          return next
        }
      )

      return Codebases.of({ importZip, importFile, importGitHost, refresh, route, approve, triage, setTriage, get })
    })
  )
}
