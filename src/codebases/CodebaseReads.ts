/**
 * Read views of codebases for the HTTP routes: the codebase with its lifecycle labels (behaviour reference §9.7),
 * the review summary, chunk lists with every filter and order, chunk detail, research list, files, symbol search
 * and the stored artifacts. Reads only; a snapshot id defaults to the codebase's current snapshot.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type {
  ChunkDetail,
  ChunkItem,
  ChunkPage,
  CodebaseResponse,
  FilesResponse,
  ItemsResponse,
  ReviewSummary
} from "../domain/Codebase.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { type CodebaseRecord, CodebaseStore, type SnapshotRecord } from "./CodebaseStore.ts"
import { previewOf } from "./intel/Chunker.ts"
import type { StoredChunk, StoredFile, StoredSymbol } from "./StoredRows.ts"
import { round4, unpackComponents } from "./intel/Significance.ts"
import { byTypeAndPaths, snapshotEdges } from "./snapshot/StoredEdges.ts"

const iso = (date: Date | null | undefined) => (date ? new Date(date).toISOString() : null)
const emptyCounts = () => ({ unrouted: 0, memory: 0, research: 0, dismissed: 0 })

export const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString("base64url")
export const decodeCursor = (cursor: string | undefined): number | ValidationError => {
  if (cursor === undefined || cursor === "") return 0
  try {
    const offset = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")).offset
    if (Number.isInteger(offset) && offset >= 0) return offset
  } catch {
    // fall through to the refusal
  }
  return ValidationError.single("cursor", "is not a cursor this service issued", "query")
}

/** (approval_status, memory_status) of a codebase from its shown snapshot and approved snapshot. */
export const lifecycle = (shown: SnapshotRecord | undefined, approvedId: string | null) => {
  if (shown === undefined) return { approval: "not_ready", memory: "not_hydrated" }
  const previous = approvedId !== null && approvedId !== shown.id ? "hydrated_from_previous_snapshot" : "not_hydrated"
  const own = approvedId === shown.id
  switch (shown.status) {
    case "failed":
      return { approval: "parse_failed", memory: previous }
    case "review_in_progress":
      return { approval: "review_in_progress", memory: own ? "hydrated" : previous }
    case "partially_approved":
      return own
        ? { approval: "partially_approved", memory: "hydrated" }
        : { approval: "review_in_progress", memory: previous }
    case "approved":
      return own ? { approval: "approved", memory: "hydrated" } : { approval: "pending_approval", memory: previous }
    case "review_required":
      return { approval: "pending_approval", memory: previous }
    default:
      return { approval: "parsing", memory: previous }
  }
}

/**
 * Scores are stored as `real` and come back with float4 noise (0.4978 as 0.49779999...); every score was written with
 * at most 4 places, so rounding there gives back exactly the value written.
 */
const written = (value: number | null | undefined) => value === null || value === undefined ? null : round4(value)

/** A row's keys in the API's snake_case (the SQL client camel-cases column names). */
const snake = (value: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), item])
  )

export const chunkItem = (row: StoredChunk): ChunkItem => ({
  id: row.id,
  chunk_key: row.chunkKey,
  path: row.path,
  language: row.language,
  kind: row.kind,
  label: row.label,
  preview_text: previewOf(row.contentText),
  start_line: row.startLine,
  end_line: row.endLine,
  container: row.container,
  parent_symbol: row.parentSymbol,
  parent_fq_name: row.parentFqName,
  parse_confidence: round4(row.parseConfidence),
  cluster_id: row.clusterId,
  cluster_label: row.clusterLabel,
  route_target: row.routeTarget,
  route_source: row.routeSource,
  change_kind: row.changeKind,
  related_count: row.relatedCount,
  document_id: row.documentId,
  significance_score: round4(row.significanceScore),
  significance_components: unpackComponents(row.significanceComponents, row.significanceScore, row.autoRouteReason),
  file_role: row.fileRole,
  auto_route_reason: row.autoRouteReason,
  complexity_score: written(row.complexityScore),
  safety_tags: row.safetyTags ?? [],
  pagerank_centrality: written(row.pagerankCentrality),
  fanin_count: row.faninCount
})

const itemColumns = `id, chunk_key, path, language, kind, label, content_text, start_line, end_line, container,
  parent_symbol, parent_fq_name, parse_confidence, cluster_id, cluster_label, route_target, route_source, change_kind,
  related_count, document_id, significance_score, significance_components, file_role, auto_route_reason,
  complexity_score, safety_tags, pagerank_centrality, fanin_count`

export interface ChunkQuery {
  readonly path_prefix?: string | undefined
  readonly language?: string | undefined
  readonly cluster_id?: string | undefined
  readonly route_target?: string | undefined
  readonly changed_only?: boolean | undefined
  readonly kind?: string | undefined
  readonly q?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly snapshot_id?: string | undefined
  readonly min_significance?: number | undefined
  readonly max_significance?: number | undefined
  readonly file_role?: string | undefined
  readonly auto_route_reason?: string | undefined
  readonly has_safety_tag?: boolean | undefined
  readonly route_source?: string | undefined
  readonly order_by?: "significance" | "review" | "path" | "complexity" | "pagerank" | undefined
}

/** A symbol as the API shows it, read from its chunk (each symbol is stored as the chunk cut for it). */
export const symbolColumns = `id, parent_symbol AS name, kind, parent_fq_name AS fq_name, container,
  symbol_exported AS exported, start_line, end_line, complexity_score::int AS complexity, symbol_pagerank AS pagerank,
  fanin_count AS fanin`

const like = (text: string) => `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`
const prefix = (text: string) => `${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`

export class CodebaseReads extends Context.Service<CodebaseReads, {
  readonly codebase: (bankId: string, codebaseId: string) => Effect.Effect<CodebaseResponse, NotFound>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<CodebaseResponse>>
  readonly review: (bankId: string, codebaseId: string) => Effect.Effect<ReviewSummary, NotFound>
  readonly chunks: (
    bankId: string,
    codebaseId: string,
    query: ChunkQuery
  ) => Effect.Effect<ChunkPage, NotFound | ValidationError>
  readonly chunk: (bankId: string, codebaseId: string, chunkId: string) => Effect.Effect<ChunkDetail, NotFound>
  readonly files: (
    bankId: string,
    codebaseId: string,
    query: {
      path_prefix?: string | undefined
      language?: string | undefined
      changed_only?: boolean | undefined
      snapshot_id?: string | undefined
    }
  ) => Effect.Effect<FilesResponse, NotFound>
  readonly symbols: (
    bankId: string,
    codebaseId: string,
    query: {
      q: string
      kind?: string | undefined
      path_prefix?: string | undefined
      language?: string | undefined
      limit?: number | undefined
    }
  ) => Effect.Effect<ItemsResponse, NotFound | ValidationError>
  /** The codebase and the snapshot a read is about (the current one unless `snapshotId` names another). */
  readonly resolve: (
    bankId: string,
    codebaseId: string,
    snapshotId?: string | null
  ) => Effect.Effect<{ codebase: CodebaseRecord; snapshot: SnapshotRecord | undefined }, NotFound>
}>()("engram/codebases/CodebaseReads") {
  static readonly layer = Layer.effect(
    CodebaseReads,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* CodebaseStore
      const orDie = <A>(effect: Effect.Effect<A, unknown>) => Effect.orDie(effect)

      const resolve = Effect.fn("CodebaseReads.resolve")(
        function*(bankId: string, codebaseId: string, snapshotId: string | null = null) {
          const found = yield* store.find(bankId, codebaseId)
          if (Option.isNone(found)) return yield* NotFound.of("codebase", codebaseId)
          const id = snapshotId ?? found.value.currentSnapshotId
          if (id === null) return { codebase: found.value, snapshot: undefined }
          const snapshot = yield* store.snapshot(id)
          if (Option.isNone(snapshot) || snapshot.value.codebaseId !== codebaseId) {
            return yield* NotFound.of("snapshot", id)
          }
          return { codebase: found.value, snapshot: snapshot.value }
        }
      )

      const reviewCounts = (snapshotId: string | undefined) =>
        snapshotId === undefined ?
          Effect.succeed(emptyCounts()) :
          orDie(
            sql<{ routeTarget: string; count: number }>`SELECT route_target, count(*)::int AS count FROM codebase_chunks
          WHERE snapshot_id = ${snapshotId} GROUP BY route_target`
          ).pipe(Effect.map((rows) => {
            const counts = emptyCounts() as Record<string, number>
            for (const row of rows) counts[row.routeTarget] = row.count
            return counts as ReturnType<typeof emptyCounts>
          }))

      /** The newest snapshot when it is still being built or failed (so `parsing` shows), else the current one. */
      const shownSnapshot = (codebase: CodebaseRecord) =>
        Effect.gen(function*() {
          const latest = yield* orDie(
            sql<{ id: string }>`SELECT id FROM codebase_snapshots WHERE codebase_id = ${codebase.id}
            ORDER BY created_at DESC LIMIT 1`
          )
          const current = codebase.currentSnapshotId === null
            ? undefined
            : Option.getOrUndefined(yield* store.snapshot(codebase.currentSnapshotId))
          const newest = latest[0] === undefined || latest[0].id === current?.id
            ? undefined
            : Option.getOrUndefined(yield* store.snapshot(latest[0].id))
          return newest !== undefined && ["pending", "processing", "failed"].includes(newest.status)
            ? newest
            : current ?? newest
        })

      const codebaseView = Effect.fn("CodebaseReads.codebaseView")(function*(codebase: CodebaseRecord) {
        const shown = yield* shownSnapshot(codebase)
        const current = codebase.currentSnapshotId === null
          ? undefined
          : Option.getOrUndefined(yield* store.snapshot(codebase.currentSnapshotId))
        const approved = codebase.approvedSnapshotId === null
          ? undefined
          : Option.getOrUndefined(yield* store.snapshot(codebase.approvedSnapshotId))
        const labels = lifecycle(shown, codebase.approvedSnapshotId)
        const stats = current?.stats ?? {}
        return {
          id: codebase.id,
          bank_id: codebase.bankId,
          name: codebase.name,
          source_type: codebase.sourceType,
          source_config: codebase.sourceConfig,
          current_snapshot_id: codebase.currentSnapshotId,
          approved_snapshot_id: codebase.approvedSnapshotId,
          source_ref: shown?.sourceRef ?? null,
          source_commit_sha: shown?.sourceCommitSha ?? null,
          snapshot_status: shown?.status ?? null,
          approved_source_ref: approved?.sourceRef ?? null,
          approved_source_commit_sha: approved?.sourceCommitSha ?? null,
          approved_snapshot_status: approved?.status ?? null,
          approval_status: labels.approval,
          memory_status: labels.memory,
          stats: shown?.stats ?? {},
          review_counts: yield* reviewCounts(current?.id),
          cluster_count: Number(stats["cluster_count"] ?? 0),
          related_chunk_count: Number(stats["related_chunk_count"] ?? 0),
          parse_coverage: Number(stats["parse_coverage"] ?? 0),
          created_at: iso(codebase.createdAt)!,
          updated_at: iso(codebase.updatedAt)!,
          snapshot_created_at: iso(shown?.createdAt),
          snapshot_updated_at: iso(shown?.updatedAt),
          approved_snapshot_updated_at: iso(approved?.updatedAt)
        }
      })

      const codebase = (bankId: string, codebaseId: string) =>
        resolve(bankId, codebaseId).pipe(Effect.flatMap(({ codebase }) => codebaseView(codebase)))

      const list = (bankId: string) =>
        store.list(bankId).pipe(Effect.flatMap((items) => Effect.forEach(items, codebaseView)))

      const review = Effect.fn("CodebaseReads.review")(function*(bankId: string, codebaseId: string) {
        const view = yield* codebase(bankId, codebaseId)
        const { snapshot } = yield* resolve(bankId, codebaseId)
        const stats = snapshot?.stats ?? {}
        return {
          codebase_id: codebaseId,
          snapshot_id: snapshot?.id ?? null,
          snapshot_status: snapshot?.status ?? null,
          approval_status: view.approval_status,
          memory_status: view.memory_status,
          review_counts: view.review_counts,
          cluster_count: view.cluster_count,
          related_chunk_count: view.related_chunk_count,
          parse_coverage: view.parse_coverage,
          changed_summary: {
            added_files: Number(stats["added_files"] ?? 0),
            changed_files: Number(stats["changed_files"] ?? 0),
            deleted_files: Number(stats["deleted_files"] ?? 0),
            reparsed_files: Number(stats["reparsed_files"] ?? 0)
          },
          diagnostics: (stats["diagnostics"] ?? []) as ReadonlyArray<Record<string, unknown>>
        }
      })

      const chunks = Effect.fn("CodebaseReads.chunks")(
        function*(bankId: string, codebaseId: string, query: ChunkQuery) {
          const offset = decodeCursor(query.cursor)
          if (typeof offset !== "number") return yield* offset
          if (
            query.min_significance !== undefined && query.max_significance !== undefined &&
            query.min_significance > query.max_significance
          ) {
            return yield* ValidationError.single("min_significance", "must not exceed max_significance", "query")
          }
          const { snapshot } = yield* resolve(bankId, codebaseId, query.snapshot_id ?? null)
          const limit = query.limit ?? 25
          if (snapshot === undefined) {
            return { codebase_id: codebaseId, snapshot_id: null, items: [], next_cursor: null, has_more: false }
          }
          const conditions = [
            sql`snapshot_id = ${snapshot.id}`,
            ...(query.path_prefix ? [sql`path LIKE ${prefix(query.path_prefix)}`] : []),
            ...(query.language ? [sql`language = ${query.language}`] : []),
            ...(query.cluster_id ? [sql`cluster_id = ${query.cluster_id}`] : []),
            ...(query.route_target ? [sql`route_target = ${query.route_target}`] : []),
            ...(query.changed_only === true ? [sql`change_kind <> 'unchanged'`] : []),
            ...(query.kind ? [sql`kind = ${query.kind}`] : []),
            ...(query.q ? [sql`(label ILIKE ${like(query.q)} OR content_text ILIKE ${like(query.q)})`] : []),
            ...(query.min_significance !== undefined ? [sql`significance_score >= ${query.min_significance}`] : []),
            ...(query.max_significance !== undefined ? [sql`significance_score <= ${query.max_significance}`] : []),
            ...(query.file_role ? [sql`file_role = ${query.file_role}`] : []),
            ...(query.auto_route_reason ? [sql`auto_route_reason ILIKE ${like(query.auto_route_reason)}`] : []),
            ...(query.has_safety_tag === true ? [sql`cardinality(safety_tags) > 0`] : []),
            ...(query.has_safety_tag === false ? [sql`cardinality(safety_tags) = 0`] : []),
            ...(query.route_source ? [sql`route_source = ${query.route_source}`] : [])
          ]
          const order = {
            significance: sql`significance_score DESC, pagerank_centrality DESC NULLS LAST, path, start_line, id`,
            review: sql`CASE route_target WHEN 'unrouted' THEN 0 WHEN 'memory' THEN 1 WHEN 'research' THEN 2 ELSE 3 END,
            CASE change_kind WHEN 'modified' THEN 0 WHEN 'added' THEN 1 ELSE 2 END, path, start_line, id`,
            path: sql`path, start_line, id`,
            complexity: sql`complexity_score DESC NULLS LAST, path, start_line, id`,
            pagerank: sql`pagerank_centrality DESC NULLS LAST, path, start_line, id`
          }[query.order_by ?? "significance"]
          const rows = yield* orDie(
            sql<StoredChunk>`SELECT ${sql.literal(itemColumns)} FROM codebase_chunks WHERE ${sql.and(conditions)}
          ORDER BY ${order} LIMIT ${limit + 1} OFFSET ${offset}`
          )
          const hasMore = rows.length > limit
          return {
            codebase_id: codebaseId,
            snapshot_id: snapshot.id,
            items: rows.slice(0, limit).map(chunkItem),
            next_cursor: hasMore ? encodeCursor(offset + limit) : null,
            has_more: hasMore
          }
        }
      )

      const chunk = Effect.fn("CodebaseReads.chunk")(function*(bankId: string, codebaseId: string, chunkId: string) {
        yield* resolve(bankId, codebaseId)
        const rows = yield* orDie(
          sql<StoredChunk & { snapshotId: string; owner: string }>`SELECT c.*, s.codebase_id AS owner
          FROM codebase_chunks c JOIN codebase_snapshots s ON s.id = c.snapshot_id WHERE c.id = ${chunkId}`
        )
        const row = rows[0]
        if (row === undefined || row.owner !== codebaseId) return yield* NotFound.of("chunk", chunkId)
        // Related chunks, as the import counted them: the neighbours in the file, and the first four chunks of
        // each file this file imports or is imported by (resolved import edges only).
        const allEdges = yield* snapshotEdges(sql, row.snapshotId)
        const neighbourPaths = [
          ...new Set(allEdges.flatMap((edge) =>
            edge.edgeType !== "imports" || edge.toPath === null ?
              [] :
              edge.fromPath === row.path
              ? [edge.toPath]
              : edge.toPath === row.path
              ? [edge.fromPath]
              : []
          ))
        ]
        const related = yield* orDie(sql`
          WITH ordered AS (
            SELECT id, path, label, kind, start_line, end_line,
              row_number() OVER (PARTITION BY path ORDER BY start_line, id) AS position
            FROM codebase_chunks WHERE snapshot_id = ${row.snapshotId}
          ), mine AS (SELECT position FROM ordered WHERE id = ${chunkId}),
          neighbours AS (SELECT unnest(${neighbourPaths}::text[]) AS path)
          SELECT 'adjacent' AS link_type, 'same-file' AS link_label, 1.0 AS score, o.id, o.path, o.label, o.kind, o.start_line, o.end_line
          FROM ordered o, mine m WHERE o.path = ${row.path} AND abs(o.position - m.position) = 1
          UNION ALL
          SELECT 'file_import', o.path, 0.5, o.id, o.path, o.label, o.kind, o.start_line, o.end_line
          FROM ordered o JOIN neighbours n ON n.path = o.path WHERE o.position <= 4 AND o.path <> ${row.path}
          ORDER BY score DESC, path, start_line LIMIT 50`)
        const symbols = yield* orDie(sql<StoredSymbol>`SELECT ${sql.literal(symbolColumns)}
          FROM codebase_chunks WHERE snapshot_id = ${row.snapshotId} AND path = ${row.path} AND symbol_exported IS NOT NULL
            AND start_line <= ${row.endLine} AND end_line >= ${row.startLine} ORDER BY start_line, parent_fq_name LIMIT 100`)
        const edges = allEdges.filter((edge) => edge.fromPath === row.path || edge.toPath === row.path).sort(
          byTypeAndPaths
        ).slice(0, 100)
        const members = row.clusterId === null ?
          [] :
          yield* orDie(
            sql<{ significanceScore: number }>`SELECT id, path, label, kind, start_line, end_line, significance_score
          FROM codebase_chunks WHERE snapshot_id = ${row.snapshotId} AND cluster_id = ${row.clusterId} AND id <> ${chunkId}
          ORDER BY significance_score DESC, path, start_line LIMIT 25`
          )
        return {
          ...chunkItem(row),
          snapshot_id: row.snapshotId,
          content_text: row.contentText,
          related_chunks: related.map(snake),
          symbols: symbols.map((symbol) => snake({ ...symbol, pagerank: written(symbol.pagerank) })),
          impact_edges: edges.map(snake),
          cluster_members: members.map((member) =>
            snake({ ...member, significanceScore: written(member.significanceScore) })
          )
        }
      })

      const files = Effect.fn("CodebaseReads.files")(
        function*(
          bankId: string,
          codebaseId: string,
          query: {
            path_prefix?: string | undefined
            language?: string | undefined
            changed_only?: boolean | undefined
            snapshot_id?: string | undefined
          }
        ) {
          const { snapshot } = yield* resolve(bankId, codebaseId, query.snapshot_id ?? null)
          if (snapshot === undefined) {
            return { snapshot_id: null, source_ref: null, source_commit_sha: null, snapshot_status: null, items: [] }
          }
          const rows = yield* orDie(
            sql<
              StoredFile
            >`SELECT path, language, status, reason, file_role, content_hash, change_kind, line_count, chunk_count
          FROM codebase_files WHERE ${
              sql.and([
                sql`snapshot_id = ${snapshot.id}`,
                ...(query.path_prefix ? [sql`path LIKE ${prefix(query.path_prefix)}`] : []),
                ...(query.language ? [sql`language = ${query.language}`] : []),
                ...(query.changed_only === true ? [sql`change_kind <> 'unchanged'`] : [])
              ])
            } ORDER BY path LIMIT 5000`
          )
          return {
            snapshot_id: snapshot.id,
            source_ref: snapshot.sourceRef,
            source_commit_sha: snapshot.sourceCommitSha,
            snapshot_status: snapshot.status,
            items: rows.map((row) => ({
              path: row.path,
              language: row.language,
              status: row.status,
              reason: row.reason,
              file_role: row.fileRole,
              content_hash: row.contentHash,
              change_kind: row.changeKind,
              line_count: row.lineCount,
              chunk_count: row.chunkCount
            }))
          }
        }
      )

      const symbols = Effect.fn("CodebaseReads.symbols")(
        function*(
          bankId: string,
          codebaseId: string,
          query: {
            q: string
            kind?: string | undefined
            path_prefix?: string | undefined
            language?: string | undefined
            limit?: number | undefined
          }
        ) {
          if (query.q.trim() === "") return yield* ValidationError.single("q", "must not be empty", "query")
          const { snapshot } = yield* resolve(bankId, codebaseId)
          if (snapshot === undefined) return { items: [] }
          const q = query.q.trim()
          const rows = yield* orDie(
            sql<
              StoredSymbol & {
                path: string
                language: string | null
                rank: number
                chunkIds: ReadonlyArray<string> | null
              }
            >`SELECT s.*, CASE WHEN s.name = ${q} OR s.fq_name = ${q} THEN 3
              WHEN s.name LIKE ${prefix(q)} OR s.fq_name LIKE ${prefix(q)} THEN 2 ELSE 1 END AS rank,
            ARRAY(SELECT c.id FROM codebase_chunks c WHERE c.snapshot_id = ${snapshot.id} AND c.path = s.path
              AND c.start_line <= s.end_line AND c.end_line >= s.start_line ORDER BY c.start_line, c.id) AS chunk_ids
          FROM (SELECT ${sql.literal(symbolColumns)}, path, language FROM codebase_chunks
            WHERE snapshot_id = ${snapshot.id} AND symbol_exported IS NOT NULL) s WHERE ${
              sql.and([
                sql`(s.name ILIKE ${like(q)} OR s.fq_name ILIKE ${like(q)})`,
                ...(query.kind ? [sql`s.kind = ${query.kind}`] : []),
                ...(query.path_prefix ? [sql`s.path LIKE ${prefix(query.path_prefix)}`] : []),
                ...(query.language ? [sql`s.language = ${query.language}`] : [])
              ])
            } ORDER BY rank DESC, s.path, s.start_line LIMIT ${query.limit ?? 50}`
          )
          return {
            items: rows.map((row) => ({
              id: row.id,
              name: row.name,
              kind: row.kind,
              fq_name: row.fqName,
              container: row.container,
              path: row.path,
              language: row.language,
              start_line: row.startLine,
              end_line: row.endLine,
              exported: row.exported,
              complexity: row.complexity,
              pagerank: written(row.pagerank),
              fanin: row.fanin,
              match: row.rank === 3 ? "exact" : row.rank === 2 ? "prefix" : "fuzzy",
              chunk_ids: row.chunkIds ?? []
            }))
          }
        }
      )

      return CodebaseReads.of({ codebase, list, review, chunks, chunk, files, symbols, resolve })
    })
  )
}
