/**
 * Codebase routes: import (zip, single file, git host), refresh, review and routing, approval into memory, and
 * code intelligence over the parsed snapshot (files, symbols, impact, curate, repo map, module briefs, symbol
 * cards, triage settings). Paths follow `shared/spec/endpoints.tsv` exactly.
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import {
  ApproveRequest,
  ApproveResponse,
  ChunkDetail,
  ChunkOrder,
  ChunkPage,
  CodebaseList,
  CodebaseResponse,
  CurateRequest,
  CurateResponse,
  FilesResponse,
  GitHostImportRequest,
  ImpactRequest,
  ImpactResponse,
  ImportResponse,
  ItemsResponse,
  RefreshRequest,
  RefreshResponse,
  RepoMapResponse,
  ReviewSummary,
  RouteRequest,
  RouteResponse,
  RouteTarget,
  SymbolCardPage,
  SymbolCardResponse,
  TriageSettingsBody,
  TriageSettingsResponse
} from "../../domain/Codebase.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"

const base = "/v1/default/banks/:bank_id/codebases"
const bank = { bank_id: BankId }
const codebase = { bank_id: BankId, codebase_id: Schema.String }
const errors = [NotFound, ValidationError]
const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const optional = <S extends Schema.Top>(schema: S) => Schema.optionalKey(schema)

export class CodebasesApi extends HttpApiGroup.make("codebases")
  .add(
    HttpApiEndpoint.post("importZip", `${base}/import/zip`, {
      params: bank,
      payload: Schema.Struct({
        archive: Multipart.SingleFileSchema,
        request: Schema.String.annotate({
          description:
            "ZipImportRequest as a JSON string: {name, root_path, include_globs, exclude_globs, refresh_existing}"
        })
      }).pipe(HttpApiSchema.asMultipart()),
      success: ImportResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Import a repository zip: checked (hostile archives are refused with 400, nothing stored), then parsed by a codebase_import operation."
    ),
    HttpApiEndpoint.post("importFile", `${base}/import/file`, {
      params: bank,
      payload: Schema.Struct({
        file: Multipart.SingleFileSchema,
        request: Schema.String.annotate({
          description: "FileImportRequest as a JSON string: {name, virtual_path, refresh_existing}"
        })
      }).pipe(HttpApiSchema.asMultipart()),
      success: ImportResponse,
      error: errors
    }).annotate(OpenApi.Description, "Import one source file as a codebase (virtual_path defaults to the file name)."),
    HttpApiEndpoint.post("importGitHost", `${base}/import/githost`, {
      params: bank,
      payload: GitHostImportRequest,
      success: ImportResponse,
      error: [...errors, ServiceUnavailable]
    }).annotate(OpenApi.Description, "Import a public repository from the git host (one archive download, no clone)."),
    HttpApiEndpoint.post("refresh", `${base}/:codebase_id/refresh`, {
      params: codebase,
      payload: [RefreshRequest, Schema.Null],
      success: RefreshResponse,
      error: [...errors, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Check the git host for a new commit: a new reviewable snapshot, or `noop` with no operation."
    ),
    HttpApiEndpoint.post("approve", `${base}/:codebase_id/approve`, {
      params: codebase,
      payload: [ApproveRequest, Schema.Null],
      success: ApproveResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Hydrate the chunks routed to memory into the bank (`direct` or `retain`), as a codebase_approve operation."
    ),
    HttpApiEndpoint.get("list", base, { params: bank, success: CodebaseList, error: errors }),
    HttpApiEndpoint.get("get", `${base}/:codebase_id`, { params: codebase, success: CodebaseResponse, error: errors }),
    HttpApiEndpoint.get("review", `${base}/:codebase_id/review`, {
      params: codebase,
      success: ReviewSummary,
      error: errors
    }),
    HttpApiEndpoint.get("chunks", `${base}/:codebase_id/chunks`, {
      params: codebase,
      query: {
        path_prefix: optional(Schema.String),
        language: optional(Schema.String),
        cluster_id: optional(Schema.String),
        route_target: optional(RouteTarget),
        changed_only: optional(Schema.Boolean),
        kind: optional(Schema.String),
        q: optional(Schema.String),
        limit: optional(between(1, 100)),
        cursor: optional(Schema.String),
        snapshot_id: optional(Schema.String),
        min_significance: optional(Schema.Number),
        max_significance: optional(Schema.Number),
        file_role: optional(Schema.String),
        auto_route_reason: optional(Schema.String),
        has_safety_tag: optional(Schema.Boolean),
        route_source: optional(Schema.String),
        order_by: optional(ChunkOrder)
      },
      success: ChunkPage,
      error: errors
    }),
    HttpApiEndpoint.get("chunk", `${base}/:codebase_id/chunks/:chunk_id`, {
      params: { ...codebase, chunk_id: Schema.String },
      success: ChunkDetail,
      error: errors
    }),
    HttpApiEndpoint.post("route", `${base}/:codebase_id/review/route`, {
      params: codebase,
      payload: RouteRequest,
      success: RouteResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Route chunks to memory, research, dismissed or unrouted; optionally queue the approval right away."
    ),
    HttpApiEndpoint.get("research", `${base}/:codebase_id/research`, {
      params: codebase,
      query: { cursor: optional(Schema.String), limit: optional(between(1, 100)) },
      success: ChunkPage,
      error: errors
    }),
    HttpApiEndpoint.get("repoMap", `${base}/:codebase_id/artifacts/repo-map`, {
      params: codebase,
      query: { snapshot_id: optional(Schema.String) },
      success: RepoMapResponse,
      error: errors
    }),
    HttpApiEndpoint.get("modules", `${base}/:codebase_id/artifacts/modules`, {
      params: codebase,
      query: { snapshot_id: optional(Schema.String), limit: optional(between(1, 500)) },
      success: ItemsResponse,
      error: errors
    }),
    HttpApiEndpoint.get("symbolCards", `${base}/:codebase_id/artifacts/symbols`, {
      params: codebase,
      query: {
        snapshot_id: optional(Schema.String),
        limit: optional(between(1, 500)),
        cursor: optional(Schema.String)
      },
      success: SymbolCardPage,
      error: errors
    }),
    HttpApiEndpoint.get("symbolCard", `${base}/:codebase_id/artifacts/symbols/:symbol_id`, {
      params: { ...codebase, symbol_id: Schema.String },
      query: { snapshot_id: optional(Schema.String) },
      success: SymbolCardResponse,
      error: errors
    }),
    HttpApiEndpoint.post("curate", `${base}/:codebase_id/curate`, {
      params: codebase,
      payload: CurateRequest,
      success: CurateResponse,
      error: errors
    }),
    HttpApiEndpoint.post("impact", `${base}/:codebase_id/impact`, {
      params: codebase,
      payload: ImpactRequest,
      success: ImpactResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Files affected by a change to one seed (exactly one of path, symbol, query), over reverse import and call edges."
    ),
    HttpApiEndpoint.get("symbols", `${base}/:codebase_id/symbols`, {
      params: codebase,
      query: {
        q: Schema.String,
        kind: optional(Schema.String),
        path_prefix: optional(Schema.String),
        language: optional(Schema.String),
        limit: optional(between(1, 200))
      },
      success: ItemsResponse,
      error: errors
    }),
    HttpApiEndpoint.get("files", `${base}/:codebase_id/files`, {
      params: codebase,
      query: {
        path_prefix: optional(Schema.String),
        language: optional(Schema.String),
        changed_only: optional(Schema.Boolean),
        snapshot_id: optional(Schema.String)
      },
      success: FilesResponse,
      error: errors
    }),
    HttpApiEndpoint.get("getTriage", `${base}/:codebase_id/triage-settings`, {
      params: codebase,
      success: TriageSettingsResponse,
      error: errors
    }),
    HttpApiEndpoint.put("putTriage", `${base}/:codebase_id/triage-settings`, {
      params: codebase,
      payload: TriageSettingsBody,
      success: TriageSettingsResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Replace the triage settings (omitted fields take their defaults); read by the next import or refresh."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Codebases", description: "Import, parse, review and approve repositories" })
  )
{}
