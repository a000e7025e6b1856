/**
 * Recall: four strategies — semantic, keyword, graph (spreading activation on the bank's snapshot) and
 * temporal — fused by weighted reciprocal rank, reranked, cut to the token budget, with the includes the
 * request asks for. Reads only: it never waits for the bank's write lock, so it answers during a retain. With the
 * bank's brain loaded it reads nothing else (`RecallSources.fromBrain`): no statement, so no wait behind another
 * bank's work on the database; without one it reads SQL (`fromSql`).
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../../bank/Banks.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import type { RecallRequest, RecallResponse, RecallResult } from "../../domain/Recall.ts"
import { Embeddings } from "../../models/Embeddings.ts"
import { Reranker } from "../../models/Reranker.ts"
import { WordVectors } from "../../models/WordVectors.ts"
import { MemoryUnits } from "../MemoryUnits.ts"
import { toUnitView } from "../UnitRow.ts"
import { modelKey } from "../Reembedding.ts"
import { countTokens } from "../retain/Tokens.ts"
import { clampToStorable, resolveTimes } from "../retain/TimeExpressions.ts"
import { budgetDepth, type StrategyName, type StrategyRun } from "./Candidates.ts"
import { conversationContext, withConversationContext } from "./ConversationContext.ts"
import { crossEncoderRerank } from "./CrossEncoderRerank.ts"
import { decayByRecency } from "./RecencyDecay.ts"
import { byCombinedScore, deterministicRerank, fusedOrder, reciprocalRankFusion } from "./Fusion.ts"
import { GraphRecall } from "./GraphRecall.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import { runSliced } from "../../brain/Sliced.ts"
import { AccessTelemetry } from "../../activity/AccessTelemetry.ts"
import { effectivePipelineSettings } from "../../domain/PipelineSettings.ts"
import { includeChunks, includeEntities, includeSourceFacts, toRecallResult } from "./RecallIncludes.ts"
import { fromBrain, fromSql, type RecallScope } from "./RecallSources.ts"
import { QueryLexemes } from "./keyword/QueryLexemes.ts"
import { demoteSuperseded } from "./SupersededPenalty.ts"
import { rankStates, stateFact, stateQuestion, subjectOf } from "./StateRanking.ts"
import { tagMatcher } from "./TagMatch.ts"
import { tagScope } from "./TagFilter.ts"
import { liveAt } from "../forgetting/Expiry.ts"

/** Branches exist once memory repos do; until then only the default branch can be named. */
const defaultBranches = new Set(["main", "default"])

/** How many fused candidates the reranker sees, and how many seeds start spreading activation. */
const rerankDepth = { low: 40, mid: 80, high: 160 } as const
const graphSeeds = 8
const expansionNeighbours = 3
const expansionMinSimilarity = 0.55
/** The longest the query expansion holds the event loop before it lets other requests in (plus one word's scan). */
const expansionSliceMillis = 4

/** How a recall reads; the defaults are what the API does. */
export interface RecallOptions {
  /** `sql` reads the database even when the brain is loaded (the reference the parity tests compare with). */
  readonly source?: "auto" | "sql" | undefined
  /** Exact nearest neighbours (scans) instead of the HNSW indexes, in SQL and in the brain. */
  readonly exactVectors?: boolean | undefined
}

/** A strategy's own score of a result, or null when that strategy did not surface it. */
const rawScore = (score: number | undefined): number | null => score === undefined ? null : Number(score.toFixed(4))

export class Recall extends Context.Service<Recall, {
  readonly recall: (
    bankId: string,
    request: RecallRequest
  ) => Effect.Effect<RecallResponse, NotFound | ValidationError | ServiceUnavailable>
  /** `recall` with its sources chosen: for parity tests and benchmarks. */
  readonly recallWith: (
    bankId: string,
    request: RecallRequest,
    options: RecallOptions
  ) => Effect.Effect<RecallResponse, NotFound | ValidationError | ServiceUnavailable>
}>()("engram/memory/Recall") {
  static readonly layer = Layer.effect(
    Recall,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = yield* Banks
      const embeddings = yield* Embeddings
      const units = yield* MemoryUnits
      const graph = yield* GraphRecall
      const wordVectors = yield* Effect.serviceOption(WordVectors)
      const brains = yield* BankBrains
      const reranker = yield* Effect.serviceOption(Reranker)
      const telemetry = yield* AccessTelemetry
      const lexemes = yield* QueryLexemes

      /**
       * Each content word's closest neighbours, for keyword search at a lower weight. A word not seen before scans
       * the GloVe pool (5 ms a word on a quiet machine, far more on a loaded one): in a server's first seconds most
       * words are new, and a query's scans in one piece held the event loop 100-200 ms, so they run in slices.
       */
      const expand = (query: string): Effect.Effect<ReadonlyArray<string>> =>
        Option.match(wordVectors, {
          onNone: () => Effect.succeed([]),
          onSome: (vectors) =>
            runSliced(
              (function*() {
                const expansion: Array<string> = []
                for (const word of new Set(query.toLowerCase().match(/[a-z]{4,}/g) ?? [])) {
                  for (const neighbour of vectors.nearest(word, expansionNeighbours)) {
                    if (
                      neighbour.similarity >= expansionMinSimilarity && !neighbour.word.startsWith(word.slice(0, 4))
                    ) {
                      expansion.push(neighbour.word)
                    }
                  }
                  yield
                }
                return expansion
              })(),
              Effect.yieldNow,
              expansionSliceMillis
            )
        })

      /** One span per strategy (same name for every bank, so traces aggregate), with how many candidates it found. */
      const timed = <E, R>(
        name: StrategyName,
        effect: Effect.Effect<ReadonlyArray<{ id: string; score: number }>, E, R>
      ) =>
        Effect.gen(function*() {
          const start = yield* Clock.currentTimeMillis
          const candidates = yield* effect
          yield* Effect.annotateCurrentSpan("engram.recall.candidates", candidates.length)
          return { name, candidates, durationMs: (yield* Clock.currentTimeMillis) - start } satisfies StrategyRun
        }).pipe(Effect.withSpan(`Recall.strategy.${name}`, { attributes: { "engram.recall.strategy": name } }))

      const recallWith = Effect.fn("Recall.recall")(
        function*(bankId: string, request: RecallRequest, options: RecallOptions) {
          const started = yield* Clock.currentTimeMillis
          // Where the time goes, for the trace: each stage's wall time in milliseconds.
          const stages: Record<string, number> = {}
          const stage = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) =>
            Effect.gen(function*() {
              const start = yield* Clock.currentTimeNanos
              const value = yield* effect
              stages[name] = (stages[name] ?? 0) + Number((yield* Clock.currentTimeNanos) - start) / 1e6
              return value
            })
          if (request.tags && request.tags.length > 0 && request.tag_groups && request.tag_groups.length > 0) {
            return yield* ValidationError.single("tag_groups", "tags and tag_groups cannot be used together")
          }
          if (request.branch_name && !defaultBranches.has(request.branch_name)) {
            return yield* NotFound.of("branch", request.branch_name)
          }
          const budget = request.budget ?? "mid"
          const depth = budgetDepth[budget]
          const types = request.types && request.types.length > 0
            ? [...request.types]
            : request.prefer_observations
            ? ["world", "experience", "observation"]
            : ["world", "experience"]
          const tags = tagMatcher({ tags: request.tags, tagsMatch: request.tags_match, tagGroups: request.tag_groups })
          // The instant the searches and the scope read at: a memory expired by then is in none of them.
          const readAt = yield* Clock.currentTimeMillis
          const scope: RecallScope = {
            types,
            tags,
            now: readAt,
            sql: sql.and([
              sql`u.bank_id = ${bankId}`,
              sql`u.fact_type IN ${sql.in(types)}`,
              liveAt(sql, "u", new Date(readAt)),
              tagScope(sql, "u.tags", {
                tags: request.tags,
                tagsMatch: request.tags_match,
                tagGroups: request.tag_groups
              })
            ])
          }
          // A loaded brain means the bank exists (deleting a bank drops it), and its settings were read when it was
          // loaded: no statement. Otherwise the bank is read (and checked) first, so no brain is built for a bank that
          // is not there; a repo restore or another node's change is picked up then.
          const loaded = brains.isLoaded(bankId)
          const bank = yield* stage("bank", loaded ? banks.cached(bankId) : banks.get(bankId))
          const pipeline = effectivePipelineSettings(bank.pipelineSettings)
          const disabled: Array<StrategyName> = [
            ...(pipeline.enableTemporalRetrieval ? [] : ["temporal" as const]),
            ...(pipeline.enableGraphRetrieval ? [] : ["graph" as const])
          ]
          const now = new Date(yield* Clock.currentTimeMillis)
          const reference = request.query_timestamp ? new Date(request.query_timestamp) : now
          // With temporal retrieval off, the query's dates are not read either: no window, no time-aware ranking.
          const named = pipeline.enableTemporalRetrieval
            ? yield* stage("time_parse", Effect.sync(() => resolveTimes(request.query, reference)[0]))
            : undefined
          const window = !pipeline.enableTemporalRetrieval
            ? null
            : named
            ? { start: named.start, end: named.end }
            : request.query_timestamp
            ? {
              start: clampToStorable(new Date(reference.getTime() - 3 * 86_400_000)),
              end: clampToStorable(new Date(reference.getTime() + 3 * 86_400_000))
            }
            : null

          const expansion = yield* stage("expand", expand(request.query))
          // The brain is brought up to date with the bank's last writes while the query is embedded (a remote
          // embedder's round trip hides it); while its breaker is open there is none, recall reads SQL and the graph
          // adds nothing.
          const [brain, vector] = yield* Effect.all([
            stage("brain", brains.available(bankId)),
            stage("embed", embeddings.embedQuery(request.query)).pipe(
              Effect.mapError((error) =>
                new ServiceUnavailable({ detail: `embedding the query failed: ${error.message}` })
              )
            )
          ], { concurrency: "unbounded" })
          const source = Option.isSome(brain) && options.source !== "sql"
            ? fromBrain(brain.value, scope, lexemes, sql, options.exactVectors === true)
            : fromSql({
              sql,
              brains,
              bankId,
              scope,
              brain,
              rowsByIds: (ids, where) => units.byIds(bankId, ids, where),
              vectors: { model: modelKey(embeddings.identity), dimensions: embeddings.identity.dimensions },
              exactVectors: options.exactVectors
            })
          const [semanticRun, keywordRun, temporalRun] = yield* stage(
            "search",
            Effect.all([
              timed("semantic", source.semantic(vector, depth)),
              timed("keyword", source.keyword(request.query, expansion, depth)),
              window === null ? Effect.succeed(undefined) : timed("temporal", source.temporal(window, depth))
            ], { concurrency: "unbounded" })
          )

          const direct = [semanticRun, keywordRun, ...(temporalRun ? [temporalRun] : [])]
          // With graph retrieval off, neither spreading activation nor the adjacent-turn context walks the links.
          const graphRun = pipeline.enableGraphRetrieval
            ? yield* Effect.gen(function*() {
              const seeds = yield* stage("fuse", Effect.sync(() => reciprocalRankFusion(direct).slice(0, graphSeeds)))
              return yield* stage(
                "graph",
                timed(
                  "graph",
                  graph.expand(bankId, seeds.map((seed) => ({ id: seed.id, activation: seed.rrf })), {
                    depth,
                    temporalOnly: false,
                    brain
                  })
                )
              )
            })
            : undefined
          const runs = graphRun === undefined ? direct : [...direct, graphRun]
          const ranked = yield* stage("fuse", Effect.sync(() => byCombinedScore(reciprocalRankFusion(runs))))
          const adjacent = pipeline.enableGraphRetrieval
            ? yield* stage(
              "context",
              graph.adjacent(
                bankId,
                ranked.slice(0, conversationContext.sources).map((candidate) => candidate.id),
                brain
              )
            )
            : new Map<string, { readonly previous: string | undefined; readonly next: string | undefined }>()
          const fused = yield* stage(
            "fuse",
            Effect.sync(() => byCombinedScore(withConversationContext(ranked, adjacent)).slice(0, rerankDepth[budget]))
          )

          // Hydrated within the request's scope: graph neighbours outside it (type, tags) were never checked.
          const rows = yield* stage("load", source.rows(fused.map((candidate) => candidate.id), true))
          const byId = new Map(rows.map((row) => [row.id, row]))
          const kept = fused.filter((candidate) => byId.has(candidate.id))
          // Candidates that only keyword, graph or time found are scored for meaning too, so the reranker weighs it for
          // all of them (LoCoMo turn hit@10 0.783 → 0.796, docs/recall.md).
          const similarity = pipeline.enableReranking
            ? new Map((yield* stage(
              "similarity",
              source.similarities(
                vector,
                kept.filter((candidate) => candidate.scores.semantic === undefined).map((candidate) => candidate.id)
              )
            )).map((hit) => [hit.id, hit.score]))
            : new Map<string, number>()
          const candidates = kept.map((candidate) => {
            const row = byId.get(candidate.id)!
            return {
              fused: candidate,
              similarity: candidate.scores.semantic ?? similarity.get(candidate.id),
              text: row.text,
              factType: row.factType,
              time: row.occurredStart ?? row.mentionedAt,
              said: row.mentionedAt,
              subject: subjectOf(row)
            }
          })
          const deterministic = pipeline.enableReranking
            ? yield* stage(
              "rerank",
              Effect.sync(() =>
                deterministicRerank(request.query, candidates, {
                  window,
                  preferObservations: request.prefer_observations === true
                })
              )
            )
            : fusedOrder(candidates)
          const crossEncoded = Option.isSome(reranker) && pipeline.enableReranking
            ? yield* stage("cross_encoder", crossEncoderRerank(reranker.value, request.query, deterministic))
            : { ranked: deterministic, trace: pipeline.enableReranking ? null : { model: "none" } }
          const superseded = demoteSuperseded(
            crossEncoded.ranked,
            (id) => (byId.get(id)?.supersededBy ?? null) !== null
          )
          const demoted = decayByRecency(
            superseded,
            (id) => byId.get(id)?.mentionedAt ?? byId.get(id)?.createdAt,
            reference,
            bank.retentionSettings.recency_half_life_days
          )
          // A question about a state (where someone works, lives, ...) gets the state valid at the time it asks about.
          const question = stateQuestion(request.query, named === undefined ? null : { end: named.end })
          const reranked = question === undefined ? demoted : yield* stage(
            "states",
            Effect.gen(function*() {
              const subjects = [
                ...new Set(demoted.flatMap((item) => {
                  const row = byId.get(item.fused.id)
                  const fact = row === undefined ? undefined : stateFact(row, question.slot)
                  return fact === undefined ? [] : [fact.subject]
                }))
              ]
              const history = subjects.length === 0 ? [] : yield* source.factsAbout(subjects)
              // The chain's missing state joins only within the request's scope.
              const inScope = new Set((yield* source.rows(history.map((row) => row.id), true)).map((row) => row.id))
              return rankStates(
                demoted.map((item) => ({ ...item, id: item.fused.id })),
                byId,
                question,
                history.filter((row) => inScope.has(row.id)),
                (row, score) => {
                  byId.set(row.id, row)
                  return {
                    id: row.id,
                    fused: { id: row.id, rrf: 0, combined: 0, ranks: {}, scores: {} },
                    text: row.text,
                    factType: row.factType,
                    time: row.occurredStart ?? row.mentionedAt,
                    score
                  }
                }
              )
            })
          )
          const threshold = request.min_score?.threshold ?? 0
          const maxTokens = request.max_tokens ?? pipeline.recallMaxTokens
          const { results, used } = yield* stage(
            "budget",
            Effect.sync(() => {
              const results: Array<RecallResult> = []
              let used = 0
              for (const item of reranked) {
                if (item.score < threshold) continue
                const cost = countTokens(item.text)
                if (used + cost > maxTokens) break
                used += cost
                const final = Number(item.score.toFixed(4))
                results.push(toRecallResult(toUnitView(byId.get(item.fused.id)!), final, {
                  final,
                  // No separate reranker score is kept: the deterministic reranker's is `final`.
                  reranker: null,
                  semantic: rawScore((item.fused.scores as Partial<Record<StrategyName, number>>).semantic),
                  keyword: rawScore((item.fused.scores as Partial<Record<StrategyName, number>>).keyword)
                }))
              }
              return { results, used }
            })
          )

          const include = request.include ?? {}
          const [entities, chunks, sourceFacts] = yield* stage(
            "includes",
            Effect.all([
              include.entities === null
                ? Effect.succeed(null)
                : includeEntities(source.entityObservations, results, include.entities?.max_tokens ?? 500),
              // A request that does not mention chunks gets the bank's choice (recall_include_chunks); null means none.
              include.chunks || (include.chunks === undefined && pipeline.recallIncludeChunks)
                ? includeChunks(source.chunks, results, include.chunks?.max_tokens ?? 8192)
                : Effect.succeed(null),
              include.source_facts
                ? includeSourceFacts(results, {
                  maxTokens: include.source_facts.max_tokens ?? 4096,
                  maxTokensPerObservation: include.source_facts.max_tokens_per_observation ?? -1
                }, (ids) => source.rows(ids, false))
                : Effect.succeed(null)
            ])
          ).pipe(Effect.orDie)

          const trace = request.trace === true
            ? {
              query: request.query,
              budget,
              depth,
              types,
              time_window: window === null
                ? null
                : { start: window.start.toISOString(), end: window.end.toISOString() },
              // Strategies the bank turned off (enable_graph_retrieval, enable_temporal_retrieval): they did not run.
              strategies_disabled: disabled,
              strategies: Object.fromEntries(runs.map((run) => [run.name, {
                duration_ms: run.durationMs,
                candidates: run.candidates.map((candidate, rank) => ({
                  id: candidate.id,
                  rank: rank + 1,
                  score: candidate.score
                }))
              }])),
              fusion: reranked.map((item) => ({
                id: item.fused.id,
                rrf: Number(item.fused.rrf.toFixed(5)),
                fused: Number(item.fused.combined.toFixed(4)),
                ranks: item.fused.ranks,
                score: Number(item.score.toFixed(4))
              })),
              reranker: crossEncoded.trace ?? { model: "deterministic" },
              source: source.name,
              results_tokens: used,
              stages_ms: Object.fromEntries(Object.entries(stages).map(([name, ms]) => [name, Number(ms.toFixed(2))])),
              total_ms: (yield* Clock.currentTimeMillis) - started
            }
            : null
          // Buffered in memory only (written in the background): telemetry adds no statement to the recall.
          yield* telemetry.record(bankId, [
            ...results.map((result) => ({ type: "memory" as const, id: result.id, score: result.score ?? null })),
            ...Object.keys(chunks ?? {}).map((id) => ({ type: "chunk" as const, id, score: null }))
          ])
          return {
            results,
            trace,
            entities,
            chunks,
            source_facts: sourceFacts === null ? null : sourceFacts.facts,
            ...(sourceFacts === null ? {} : { source_facts_truncated: sourceFacts.truncated })
          } satisfies RecallResponse
        },
        (effect) =>
          effect.pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.provideService(BankBrains, brains)
          )
      )

      return Recall.of({ recall: (bankId, request) => recallWith(bankId, request, {}), recallWith })
    })
  ).pipe(Layer.provide(QueryLexemes.layer))
}
