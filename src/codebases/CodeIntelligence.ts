/**
 * Code intelligence over a parsed snapshot, before any approval: impact analysis (breadth-first over reverse
 * import and call edges from one seed), curation by intent (deterministic bag-of-words over chunks and symbol
 * cards, behaviour reference §10.7) and the stored artifacts (repo map, module briefs, symbol cards).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type {
  CurateRequest,
  CurateResponse,
  ImpactRequest,
  ImpactResponse,
  ItemsResponse,
  RepoMapResponse,
  SymbolCardPage,
  SymbolCardResponse
} from "../domain/Codebase.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { chunkItem, CodebaseReads, decodeCursor, encodeCursor } from "./CodebaseReads.ts"
import { previewOf } from "./intel/Chunker.ts"
import { byTypeAndPaths, snapshotEdges } from "./snapshot/StoredEdges.ts"
import type { StoredChunk } from "./StoredRows.ts"
import type { EdgeRow } from "./snapshot/SnapshotRows.ts"

const stopwords = new Set(
  ("the a an and or of to in for on at that this with is are be by as it i do does we my our your their from " +
    "about what how when where which into via code function module file class").split(" ")
)
const tokens = (text: string) =>
  new Set(
    (text.toLowerCase().match(/[a-z0-9_]+/g) ?? []).flatMap((token) => [token, ...token.split("_")])
      .filter((token) => token.length > 1 && !stopwords.has(token))
  )
/** Splits camelCase so `KeywordIndex` matches the intent word `keyword`. */
const words = (text: string) => tokens(text.replace(/([a-z0-9])([A-Z])/g, "$1 $2"))

const textScore = (intent: ReadonlySet<string>, bag: ReadonlySet<string>) => {
  if (intent.size === 0 || bag.size === 0) return 0
  let shared = 0
  for (const token of intent) if (bag.has(token)) shared++
  return Math.min(1, shared / Math.sqrt(intent.size * bag.size))
}
const pathScore = (intent: ReadonlySet<string>, path: string) => {
  if (intent.size === 0) return 0
  const parts = words(path)
  let shared = 0
  for (const token of intent) if (parts.has(token)) shared++
  return shared / intent.size
}
const round = (value: number) => Number(value.toFixed(4))

/** A stored symbol card (`intel/Artifacts.ts` writes it); curation reads these fields, the API shows it whole. */
type StoredCard = Record<string, unknown> & {
  readonly name: string
  readonly signature: string
  readonly purpose: string | null
  readonly path: string
  readonly significance_score: number
  readonly pagerank: number
}

/** A symbol the impact seed matched. */
interface MatchedSymbol {
  readonly name: string
  readonly fqName: string
  readonly kind: string
  readonly path: string
  readonly startLine: number
  readonly endLine: number
}

export class CodeIntelligence extends Context.Service<CodeIntelligence, {
  readonly impact: (
    bankId: string,
    codebaseId: string,
    request: ImpactRequest
  ) => Effect.Effect<ImpactResponse, NotFound | ValidationError>
  readonly curate: (
    bankId: string,
    codebaseId: string,
    request: CurateRequest
  ) => Effect.Effect<CurateResponse, NotFound>
  readonly repoMap: (
    bankId: string,
    codebaseId: string,
    snapshotId: string | undefined
  ) => Effect.Effect<RepoMapResponse, NotFound>
  readonly modules: (
    bankId: string,
    codebaseId: string,
    snapshotId: string | undefined,
    limit: number
  ) => Effect.Effect<ItemsResponse, NotFound>
  readonly symbolCards: (
    bankId: string,
    codebaseId: string,
    snapshotId: string | undefined,
    limit: number,
    cursor: string | undefined
  ) => Effect.Effect<SymbolCardPage, NotFound | ValidationError>
  readonly symbolCard: (
    bankId: string,
    codebaseId: string,
    symbolId: string,
    snapshotId: string | undefined
  ) => Effect.Effect<SymbolCardResponse, NotFound>
}>()("engram/codebases/CodeIntelligence") {
  static readonly layer = Layer.effect(
    CodeIntelligence,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const reads = yield* CodebaseReads
      const orDie = <A>(effect: Effect.Effect<A, unknown>) => Effect.orDie(effect)

      const snapshotOf = (bankId: string, codebaseId: string, snapshotId?: string | null) =>
        reads.resolve(bankId, codebaseId, snapshotId ?? null).pipe(
          Effect.flatMap(({ snapshot }) =>
            snapshot === undefined
              ? Effect.fail(NotFound.of("snapshot", `current snapshot of codebase '${codebaseId}'`))
              : Effect.succeed(snapshot)
          )
        )

      const impact = Effect.fn("CodeIntelligence.impact")(
        function*(bankId: string, codebaseId: string, request: ImpactRequest) {
          const seeds = (["path", "symbol", "query"] as const).filter((key) =>
            request[key] !== undefined && request[key] !== null
          )
          if (seeds.length !== 1) {
            return yield* ValidationError.single("body", "exactly one of path, symbol or query is required")
          }
          const type = seeds[0]!
          const value = request[type]!
          const maxDepth = request.max_depth ?? 2
          const limit = request.limit ?? 50
          const snapshot = yield* snapshotOf(bankId, codebaseId)
          let matched: ReadonlyArray<MatchedSymbol> = []
          let seedPaths: Array<string> = []
          if (type === "path") {
            const found = yield* orDie(
              sql<
                { path: string }
              >`SELECT path FROM codebase_files WHERE snapshot_id = ${snapshot.id} AND path = ${value}`
            )
            if (found.length === 0) {
              return yield* ValidationError.single("path", `'${value}' is not a file of the snapshot`)
            }
            seedPaths = [value]
          } else {
            matched = yield* orDie(
              sql<
                MatchedSymbol
              >`SELECT parent_symbol AS name, parent_fq_name AS fq_name, kind, path, start_line, end_line
            FROM codebase_chunks WHERE snapshot_id = ${snapshot.id} AND symbol_exported IS NOT NULL
              AND (parent_symbol = ${value} OR parent_fq_name = ${value} OR (${
                type === "query"
              } AND parent_symbol ILIKE ${`%${value}%`}))
            ORDER BY (parent_symbol = ${value} OR parent_fq_name = ${value}) DESC, symbol_pagerank DESC, path LIMIT 25`
            )
            seedPaths = [...new Set(matched.map((row) => row.path))]
            if (type === "query" && seedPaths.length === 0) {
              const files = yield* orDie(
                sql<{ path: string }>`SELECT path FROM codebase_files WHERE snapshot_id = ${snapshot.id}
              AND path ILIKE ${`%${value}%`} ORDER BY path LIMIT 10`
              )
              seedPaths = files.map((row) => row.path)
            }
          }
          // One edge per (type, source file, target file), resolved and between two files.
          const pairs = new Set<string>()
          const edges = (yield* snapshotEdges(sql, snapshot.id)).filter(
            (edge): edge is EdgeRow & { toPath: string } => {
              if (edge.toPath === null || edge.toPath === edge.fromPath) return false
              const pair = `${edge.edgeType}\u0000${edge.fromPath}\u0000${edge.toPath}`
              if (pairs.has(pair)) return false
              pairs.add(pair)
              return true
            }
          ).sort(byTypeAndPaths)
          const dependents = new Map<string, Array<(typeof edges)[number]>>()
          for (const edge of edges) {
            const list = dependents.get(edge.toPath) ?? []
            list.push(edge)
            dependents.set(edge.toPath, list)
          }
          const depth = new Map(seedPaths.map((path) => [path, 0]))
          const traversed: Array<(typeof edges)[number]> = []
          let frontier = [...seedPaths]
          for (let level = 1; level <= maxDepth && frontier.length > 0; level++) {
            const next: Array<string> = []
            for (const path of frontier.sort()) {
              for (const edge of dependents.get(path) ?? []) {
                traversed.push(edge)
                if (!depth.has(edge.fromPath)) {
                  depth.set(edge.fromPath, level)
                  next.push(edge.fromPath)
                }
              }
            }
            frontier = next
          }
          const impacted = [...depth].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit)
          const reachedDepth = Math.max(0, ...impacted.map(([, level]) => level))
          return {
            codebase_id: codebaseId,
            snapshot_id: snapshot.id,
            seed: { type, value },
            impacted_files: impacted.map(([path, level]) => ({ path, depth: level })),
            matched_symbols: matched.map((row) => ({
              name: row.name,
              fq_name: row.fqName,
              kind: row.kind,
              path: row.path,
              start_line: row.startLine,
              end_line: row.endLine
            })),
            edges: traversed.slice(0, 4 * limit).map((edge) => ({
              edge_type: edge.edgeType,
              from_path: edge.fromPath,
              to_path: edge.toPath,
              from_symbol: edge.fromSymbol,
              to_symbol: edge.toSymbol
            })),
            explanation:
              `Seeded impact analysis from ${type} '${value}' (${seedPaths.length} seed files). Traversed reverse import ` +
              `and call edges up to depth ${maxDepth} (deepest reached ${reachedDepth}) and found ${
                Math.max(0, depth.size - seedPaths.length)
              } impacted files.`
          }
        }
      )

      const curate = Effect.fn("CodeIntelligence.curate")(
        function*(bankId: string, codebaseId: string, request: CurateRequest) {
          const snapshot = yield* snapshotOf(bankId, codebaseId, request.snapshot_id)
          const intent = new Set([...words(request.intent), ...words(request.scope_hint ?? "")])
          const routes = request.include_dismissed === true
            ? ["memory", "unrouted", "research", "dismissed"]
            : ["memory", "unrouted", "research"]
          const rows = yield* orDie(
            sql<StoredChunk>`SELECT * FROM codebase_chunks WHERE snapshot_id = ${snapshot.id} AND route_target IN ${
              sql.in(routes)
            }
          ORDER BY significance_score DESC, path, start_line LIMIT 4000`
          )
          const scored = rows.map((row) => {
            const text = textScore(intent, words(`${row.label} ${previewOf(row.contentText)}`))
            const path = pathScore(intent, row.path)
            const score = 0.45 * text + 0.25 * row.significanceScore + 0.15 * (row.pagerankCentrality ?? 0) +
              0.15 * path
            return { row, text, path, score: text + path > 0 ? score : 0 }
          }).filter((entry) => entry.score > 0).sort((a, b) => b.score - a.score)
          const clusters = new Map<string, typeof scored>()
          for (const entry of scored) {
            const key = entry.row.clusterId ?? "none"
            const list = clusters.get(key) ?? []
            list.push(entry)
            clusters.set(key, list)
          }
          const badge = (entry: { text: number; path: number; row: StoredChunk }) =>
            `text ${entry.text.toFixed(2)} | path ${entry.path.toFixed(2)} | signal ${
              Number(entry.row.significanceScore).toFixed(2)
            } | central ${Number(entry.row.pagerankCentrality ?? 0).toFixed(2)}`
          const rankedClusters = [...clusters].map(([id, list]) => ({
            cluster_id: id,
            cluster_label: list[0]!.row.clusterLabel,
            score: round(list.slice(0, 3).reduce((sum, entry) => sum + entry.score, 0) / Math.min(3, list.length)),
            size: list.length,
            chunks: list.slice(0, 3).map((entry) => ({
              ...chunkItem(entry.row),
              score: round(entry.score),
              explain: badge(entry)
            }))
          })).sort((a, b) => b.score - a.score || (a.cluster_id < b.cluster_id ? -1 : 1)).slice(
            0,
            request.top_k_clusters ?? 10
          )
          const cards = yield* orDie(
            sql<{ body: StoredCard }>`SELECT body FROM codebase_artifacts WHERE snapshot_id = ${snapshot.id}
          AND kind = 'symbol_card' ORDER BY rank LIMIT 1500`
          )
          const symbolCards = cards.map(({ body }) => {
            const text = textScore(intent, words(`${body.name} ${body.signature} ${body.purpose} ${body.path}`))
            const path = pathScore(intent, body.path)
            const score = 0.5 * text + 0.2 * body.significance_score + 0.15 * body.pagerank + 0.15 * path
            return {
              ...body,
              score: round(score),
              explain: `text ${text.toFixed(2)} | path ${path.toFixed(2)} | signal ${
                Number(body.significance_score).toFixed(2)
              } | central ${Number(body.pagerank).toFixed(2)}`,
              relevant: text + path > 0
            }
          }).filter((card) => card.relevant).sort((a, b) => b.score - a.score).slice(0, request.top_k_symbols ?? 20)
            .map(({ relevant: _relevant, ...card }) => card)
          return {
            codebase_id: codebaseId,
            snapshot_id: snapshot.id,
            intent: request.intent,
            scope_hint: request.scope_hint ?? null,
            clusters: rankedClusters,
            symbol_cards: symbolCards,
            unclustered: rankedClusters.length === 0 ? scored.slice(0, 10).map((entry) => chunkItem(entry.row)) : [],
            total_candidates: scored.length
          }
        }
      )

      const artifacts = (snapshotId: string, kind: string, limit: number, offset: number) =>
        orDie(
          sql<
            { body: Record<string, unknown> }
          >`SELECT body FROM codebase_artifacts WHERE snapshot_id = ${snapshotId} AND kind = ${kind}
          ORDER BY rank LIMIT ${limit} OFFSET ${offset}`
        ).pipe(Effect.map((rows) => rows.map((row) => row.body)))

      const repoMap = Effect.fn("CodeIntelligence.repoMap")(
        function*(bankId: string, codebaseId: string, snapshotId: string | undefined) {
          const { snapshot } = yield* reads.resolve(bankId, codebaseId, snapshotId ?? null)
          if (snapshot === undefined) {
            return { codebase_id: codebaseId, snapshot_id: null, generated_at: null, repo_map: null }
          }
          const map = yield* artifacts(snapshot.id, "repo_map", 1, 0)
          return {
            codebase_id: codebaseId,
            snapshot_id: snapshot.id,
            generated_at: new Date(snapshot.updatedAt).toISOString(),
            repo_map: map[0] ?? null
          }
        }
      )

      const modules = Effect.fn("CodeIntelligence.modules")(
        function*(bankId: string, codebaseId: string, snapshotId: string | undefined, limit: number) {
          const { snapshot } = yield* reads.resolve(bankId, codebaseId, snapshotId ?? null)
          return { items: snapshot === undefined ? [] : yield* artifacts(snapshot.id, "module_brief", limit, 0) }
        }
      )

      const symbolCards = Effect.fn("CodeIntelligence.symbolCards")(
        function*(
          bankId: string,
          codebaseId: string,
          snapshotId: string | undefined,
          limit: number,
          cursor: string | undefined
        ) {
          const offset = decodeCursor(cursor)
          if (typeof offset !== "number") return yield* offset
          const { snapshot } = yield* reads.resolve(bankId, codebaseId, snapshotId ?? null)
          if (snapshot === undefined) return { items: [], next_cursor: null, has_more: false }
          const items = yield* artifacts(snapshot.id, "symbol_card", limit + 1, offset)
          const hasMore = items.length > limit
          return {
            items: items.slice(0, limit),
            next_cursor: hasMore ? encodeCursor(offset + limit) : null,
            has_more: hasMore
          }
        }
      )

      const symbolCard = Effect.fn("CodeIntelligence.symbolCard")(
        function*(bankId: string, codebaseId: string, symbolId: string, snapshotId: string | undefined) {
          const snapshot = yield* snapshotOf(bankId, codebaseId, snapshotId)
          const rows = yield* orDie(
            sql<
              { body: Record<string, unknown> }
            >`SELECT body FROM codebase_artifacts WHERE snapshot_id = ${snapshot.id}
          AND kind = 'symbol_card' AND ref_id = ${symbolId}`
          )
          if (rows[0] === undefined) return yield* NotFound.of("symbol card", symbolId)
          return { codebase_id: codebaseId, snapshot_id: snapshot.id, symbol_card: rows[0].body }
        }
      )

      return CodeIntelligence.of({ impact, curate, repoMap, modules, symbolCards, symbolCard })
    })
  )
}
