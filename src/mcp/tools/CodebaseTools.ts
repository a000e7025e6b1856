/**
 * MCP tools for codebases: import a repository from the git host, list the bank's codebases, search chunks and
 * symbols of a parsed snapshot, the impact of a change, routing and approval into memory. They call `Codebases`,
 * `CodebaseReads` and `CodeIntelligence`, as the REST handlers do. Offered only when
 * `SERVICE_API_CODEBASE_MCP_TOOLS=true`, so the default tool list stays the spec's tools and the knowledge base's.
 */
import { Effect, Schema } from "effect"
import { CodebaseReads } from "../../codebases/CodebaseReads.ts"
import { Codebases } from "../../codebases/Codebases.ts"
import { CodeIntelligence } from "../../codebases/CodeIntelligence.ts"
import {
  ChunkOrder,
  GitHostImportRequest,
  ImpactRequest,
  IngestMode,
  RouteRequest,
  RouteTarget
} from "../../domain/Codebase.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const codebaseId = { codebase_id: described(Schema.String, "The codebase's id (see list_codebases).") }
const importFields = GitHostImportRequest.fields

export const codebaseTools = Effect.gen(function*() {
  const codebases = yield* Codebases
  const reads = yield* CodebaseReads
  const intelligence = yield* CodeIntelligence

  return [
    defineTool({
      name: "import_codebase",
      title: "Import a codebase from the git host",
      description: "Import a public repository from the configured git host (owner/repo/ref or repo_url) as one " +
        "archive, no clone. Returns at once with an operation_id (poll get_operation); the parsed snapshot is then " +
        "reviewable. Set refresh_existing to import a new snapshot of a repository imported before.",
      fields: {
        owner: described(importFields.owner, "The repository's owner, e.g. 'effect-ts' (or give repo_url)."),
        repo: described(importFields.repo, "The repository's name, e.g. 'effect' (or give repo_url)."),
        ref: described(importFields.ref, "Branch, tag or commit; default the repository's default branch."),
        repo_url: described(
          importFields.repo_url,
          "The repository's URL, e.g. https://github.com/owner/repo/tree/main."
        ),
        root_path: described(importFields.root_path, "Import only this folder of the repository."),
        include_globs: described(importFields.include_globs, "Only files matching one of these globs, e.g. 'src/**'."),
        exclude_globs: described(importFields.exclude_globs, "Leave out files matching one of these globs."),
        refresh_existing: described(importFields.refresh_existing, "Import a new snapshot if the codebase exists.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: (bankId, args) => codebases.importGitHost(bankId, args)
    }),
    defineTool({
      name: "list_codebases",
      title: "List codebases",
      description: "List the bank's imported codebases with their current snapshot's status, approval and memory " +
        "status, review counts and parse coverage.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => Effect.map(reads.list(bankId), (items) => ({ items }))
    }),
    defineTool({
      name: "search_codebase_chunks",
      title: "Search code chunks",
      description: "Search the chunks (one per symbol, plus regions) of a codebase's current snapshot: text in q, " +
        "filters by path prefix, language, kind or route, ordered by significance by default. Each item has its " +
        "path, lines, preview, significance and route.",
      fields: {
        ...codebaseId,
        q: optional(Schema.String, "Only chunks whose label, path or text contains this (case-insensitive)."),
        path_prefix: optional(Schema.String, "Only chunks of files under this path."),
        language: optional(Schema.String, "Only chunks of this language, e.g. 'typescript'."),
        kind: optional(Schema.String, "Only chunks of this kind, e.g. 'function', 'class', 'region'."),
        route_target: optional(RouteTarget, "Only chunks routed to memory, research, dismissed or unrouted."),
        order_by: optional(ChunkOrder, "significance (default), review, path, complexity or pagerank."),
        limit: withDefault(between(1, 100), 25, "How many chunks to return (1-100).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { codebase_id, ...query }) => reads.chunks(bankId, codebase_id, query)
    }),
    defineTool({
      name: "search_codebase_symbols",
      title: "Search code symbols",
      description: "Find functions, classes, methods and other symbols of a codebase by name: exact matches first, " +
        "then prefix, then fuzzy. Each match has its kind, path, lines and fully qualified name.",
      fields: {
        ...codebaseId,
        q: described(Schema.String.check(Schema.isMinLength(1)), "The name or part of it, e.g. 'Recall' or 'recal'."),
        kind: optional(Schema.String, "Only symbols of this kind, e.g. 'class' or 'function'."),
        path_prefix: optional(Schema.String, "Only symbols of files under this path."),
        language: optional(Schema.String, "Only symbols of this language."),
        limit: withDefault(between(1, 200), 50, "How many matches to return (1-200).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { codebase_id, ...query }) => reads.symbols(bankId, codebase_id, query)
    }),
    defineTool({
      name: "codebase_impact",
      title: "Impact of a code change",
      description: "Which files a change would affect: give exactly one seed (a file path, a symbol name, or a " +
        "free-text query), and get the files reached over reverse import and call edges (breadth first), with the " +
        "edges and a plain explanation.",
      fields: {
        ...codebaseId,
        path: described(ImpactRequest.fields.path, "Seed: a file path of the snapshot, e.g. 'src/domain/Bank.ts'."),
        symbol: described(ImpactRequest.fields.symbol, "Seed: a symbol name or fully qualified name."),
        query: described(ImpactRequest.fields.query, "Seed: words matched against paths and symbol names."),
        max_depth: described(ImpactRequest.fields.max_depth, "How many edges away to follow (1-8)."),
        limit: described(ImpactRequest.fields.limit, "How many impacted files to return (1-200).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { codebase_id, ...request }) => intelligence.impact(bankId, codebase_id, request)
    }),
    defineTool({
      name: "route_codebase_chunks",
      title: "Route code chunks",
      description: "Move chunks of the current snapshot to memory, research, dismissed or unrouted (the review " +
        "step before approve_codebase). Ids come from search_codebase_chunks.",
      fields: {
        ...codebaseId,
        item_ids: described(RouteRequest.fields.item_ids, "The chunk ids to move (1-5000)."),
        target: described(RouteTarget, "memory, research, dismissed or unrouted.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { codebase_id, item_ids, target }) =>
        Effect.map(codebases.route(bankId, codebase_id, { item_ids, target }), (routed) => ({
          codebase_id,
          snapshot_id: routed.snapshot_id,
          updated_count: routed.updated_count,
          target
        }))
    }),
    defineTool({
      name: "approve_codebase",
      title: "Approve a codebase snapshot into memory",
      description: "Store the chunks routed to memory as memories with path:line provenance, as a background " +
        "operation (poll get_operation). `direct` stores them as they are (fast, no model); `retain` runs the " +
        "full retain. A re-approval after a refresh replaces changed chunks' memories and removes deleted ones.",
      fields: {
        ...codebaseId,
        snapshot_id: optional(Schema.String, "The snapshot to approve; default the codebase's current one."),
        memory_ingest_mode: withDefault(IngestMode, "direct", "direct (no model) or retain (full retain path).")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { codebase_id, snapshot_id, memory_ingest_mode }) =>
        Effect.map(codebases.approve(bankId, codebase_id, snapshot_id ?? null, memory_ingest_mode), (queued) => ({
          codebase_id,
          snapshot_id: queued.snapshot_id,
          operation_id: queued.operation_id,
          status: "pending",
          memory_ingest_mode
        }))
    })
  ]
})
