/**
 * REST handlers for codebases: multipart reading and the JSON `request` field of the imports, then thin calls
 * into `Codebases` (commands), `CodebaseReads` and `CodeIntelligence` (reads).
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { readFile } from "node:fs/promises"
import { CodebaseReads } from "../../codebases/CodebaseReads.ts"
import { Codebases } from "../../codebases/Codebases.ts"
import { CodeIntelligence } from "../../codebases/CodeIntelligence.ts"
import { FileImportRequest, ZipImportRequest } from "../../domain/Codebase.ts"
import { EngramApi } from "../api/Api.ts"
import { formRequestDecoder } from "./FormRequest.ts"

const bytesOf = (path: string) =>
  Effect.promise(() => readFile(path)).pipe(
    Effect.map((bytes) => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  )

export const CodebasesHandlers = HttpApiBuilder.group(
  EngramApi,
  "codebases",
  Effect.fn(function*(handlers) {
    const codebases = yield* Codebases
    const reads = yield* CodebaseReads
    const intelligence = yield* CodeIntelligence
    const zipRequest = formRequestDecoder(ZipImportRequest)
    const fileRequest = formRequestDecoder(FileImportRequest)
    const counts = (bankId: string, codebaseId: string) =>
      reads.codebase(bankId, codebaseId).pipe(Effect.map((view) => view.review_counts))

    return handlers.handleAll({
      importZip: Effect.fn(function*({ params, payload }) {
        const request = yield* zipRequest(payload.request)
        return yield* codebases.importZip(params.bank_id, yield* bytesOf(payload.archive.path), request)
      }),
      importFile: Effect.fn(function*({ params, payload }) {
        const request = yield* fileRequest(payload.request)
        return yield* codebases.importFile(
          params.bank_id,
          payload.file.name,
          yield* bytesOf(payload.file.path),
          request
        )
      }),
      importGitHost: ({ params, payload }) => codebases.importGitHost(params.bank_id, payload),
      refresh: ({ params, payload }) => codebases.refresh(params.bank_id, params.codebase_id, payload ?? {}),
      approve: Effect.fn(function*({ params, payload }) {
        const mode = payload?.memory_ingest_mode ?? "direct"
        const queued = yield* codebases.approve(params.bank_id, params.codebase_id, payload?.snapshot_id ?? null, mode)
        return {
          codebase_id: params.codebase_id,
          snapshot_id: queued.snapshot_id,
          operation_id: queued.operation_id,
          status: "pending",
          memory_ingest_mode: mode
        }
      }),
      list: ({ params }) => Effect.map(reads.list(params.bank_id), (items) => ({ items })),
      get: ({ params }) => reads.codebase(params.bank_id, params.codebase_id),
      review: ({ params }) => reads.review(params.bank_id, params.codebase_id),
      chunks: ({ params, query }) => reads.chunks(params.bank_id, params.codebase_id, query),
      chunk: ({ params }) => reads.chunk(params.bank_id, params.codebase_id, params.chunk_id),
      route: Effect.fn(function*({ params, payload }) {
        const routed = yield* codebases.route(params.bank_id, params.codebase_id, payload)
        return {
          codebase_id: params.codebase_id,
          snapshot_id: routed.snapshot_id,
          updated_count: routed.updated_count,
          target: payload.target,
          operation_id: routed.operation_id,
          queued_for_memory: routed.operation_id !== null,
          memory_ingest_mode: payload.memory_ingest_mode ?? "direct",
          review_counts: yield* counts(params.bank_id, params.codebase_id)
        }
      }),
      research: ({ params, query }) =>
        reads.chunks(params.bank_id, params.codebase_id, {
          route_target: "research",
          order_by: "path",
          limit: query.limit,
          cursor: query.cursor
        }),
      repoMap: ({ params, query }) => intelligence.repoMap(params.bank_id, params.codebase_id, query.snapshot_id),
      modules: ({ params, query }) =>
        intelligence.modules(params.bank_id, params.codebase_id, query.snapshot_id, query.limit ?? 100),
      symbolCards: ({ params, query }) =>
        intelligence.symbolCards(
          params.bank_id,
          params.codebase_id,
          query.snapshot_id,
          query.limit ?? 100,
          query.cursor
        ),
      symbolCard: ({ params, query }) =>
        intelligence.symbolCard(params.bank_id, params.codebase_id, params.symbol_id, query.snapshot_id),
      curate: ({ params, payload }) => intelligence.curate(params.bank_id, params.codebase_id, payload),
      impact: ({ params, payload }) => intelligence.impact(params.bank_id, params.codebase_id, payload),
      symbols: ({ params, query }) => reads.symbols(params.bank_id, params.codebase_id, query),
      files: ({ params, query }) => reads.files(params.bank_id, params.codebase_id, query),
      getTriage: ({ params }) =>
        Effect.map(
          codebases.triage(params.bank_id, params.codebase_id),
          (settings) => ({ codebase_id: params.codebase_id, settings })
        ),
      putTriage: ({ params, payload }) =>
        Effect.map(
          codebases.setTriage(params.bank_id, params.codebase_id, payload),
          (settings) => ({ codebase_id: params.codebase_id, settings })
        )
    })
  })
)
