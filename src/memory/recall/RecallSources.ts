/**
 * Where a recall reads: the bank's brain (`fromBrain`: candidates, rows and includes from memory — no statement), or
 * SQL (`fromSql`: pgvector, the time-window index, the memory rows) when there is no brain to read — its breaker is
 * open, it would pass the brain's size limit — and as the reference the parity tests hold the brain to. The keyword
 * strategy reads the brain's index in both when there is one; the graph strategy only exists in the brain.
 */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Brain } from "../../brain/Brain.ts"
import { BankBrains } from "../../brain/BankBrains.ts"
import type { RecordScope } from "../../brain/records/MemoryRecords.ts"
import type { UnitRow } from "../UnitRow.ts"
import type { Candidate } from "./Candidates.ts"
import { keywordInMemory, queryTerms } from "./keyword/KeywordSearch.ts"
import type { QueryLexemes } from "./keyword/QueryLexemes.ts"
import {
  type ChunkReader,
  chunksInSql,
  entityObservationLimit,
  type EntityObservationReader,
  entityObservationsInSql
} from "./RecallIncludes.ts"
import { semantic, similarities, temporal } from "./Strategies.ts"
import type { TagPredicate } from "./TagMatch.ts"

type Fragment = ReturnType<SqlClient.SqlClient["and"]>

export interface RecallSource {
  readonly name: "brain" | "sql"
  readonly semantic: (vector: Float32Array, depth: number) => Effect.Effect<ReadonlyArray<Candidate>>
  /** The query's similarity to the given memories, scored as `semantic` scores them (those without a vector left out). */
  readonly similarities: (vector: Float32Array, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Candidate>>
  readonly keyword: (
    query: string,
    expansion: ReadonlyArray<string>,
    depth: number
  ) => Effect.Effect<ReadonlyArray<Candidate>>
  readonly temporal: (
    window: { readonly start: Date; readonly end: Date },
    depth: number
  ) => Effect.Effect<ReadonlyArray<Candidate>>
  /** The rows of `ids` that are in the request's scope (type, tags), or all of them; in no particular order. */
  readonly rows: (ids: ReadonlyArray<string>, inScope: boolean) => Effect.Effect<ReadonlyArray<UnitRow>>
  readonly entityObservations: EntityObservationReader
  readonly chunks: ChunkReader
  /** The facts naming any of these entities, most recent first (a state's history; see `StateRanking`). */
  readonly factsAbout: (entityNames: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<UnitRow>>
}

/** How many of an entity's facts a state question looks through. */
export const stateHistoryLimit = 200

/** The request's scope, as the brain tests it and as SQL writes it. */
export interface RecallScope {
  readonly types: ReadonlyArray<string>
  readonly tags: TagPredicate | undefined
  readonly sql: Fragment
  /** Epoch ms the request reads at: what expired by then is not there (the SQL fragment says it too). */
  readonly now: number
}

/** `sql` is only for the query's lexemes when `lexemes` cannot compute them. */
export const fromBrain = (
  brain: Brain,
  scope: RecallScope,
  lexemes: QueryLexemes["Service"],
  sql: SqlClient.SqlClient,
  /** Exact nearest neighbours (a scan) even where the bank has an HNSW index. */
  exactVectors = false
): RecallSource => {
  const { records, keywords } = brain
  const recordScope: RecordScope = { types: scope.types, tags: scope.tags, now: scope.now }
  return {
    name: "brain",
    semantic: (vector, depth) =>
      Effect.sync(() => records.nearest(vector, recordScope, depth, { exact: exactVectors })),
    similarities: (vector, ids) => Effect.sync(() => records.similarities(vector, ids)),
    keyword: (query, expansion, depth) =>
      query.trim() === ""
        ? Effect.succeed([])
        : Effect.map(queryTerms(query, expansion, 0.3, lexemes), (terms) =>
          keywords.search(terms, {
            types: scope.types,
            tags: scope.tags,
            depth,
            excluded: records.expiredAt(scope.now)
          })).pipe(
            Effect.orDie,
            Effect.provideService(SqlClient.SqlClient, sql)
          ),
    temporal: (window, depth) =>
      Effect.sync(() =>
        records.inWindow({ start: window.start.getTime(), end: window.end.getTime() }, recordScope, depth)
      ),
    rows: (ids, inScope) =>
      Effect.sync(() =>
        ids.filter((id) => inScope ? records.inScope(id, recordScope) : records.liveAt(id, scope.now)).map((id) =>
          records.row(id)!
        )
      ),
    entityObservations: (names) =>
      Effect.sync(() => {
        const found = records.entityObservations(names, entityObservationLimit, scope.now)
        const nameOf = new Map(found.entities.map((entity) => [entity.id, entity.canonicalName]))
        const observed = new Set(found.observations.map((observation) => observation.entityId))
        return [
          ...found.observations.map((observation) => ({
            id: observation.entityId,
            canonicalName: nameOf.get(observation.entityId)!,
            text: observation.text,
            mentionedAt: observation.mentionedAt
          })),
          ...found.entities.filter((entity) => !observed.has(entity.id))
            .map((entity) => ({ id: entity.id, canonicalName: entity.canonicalName, text: null, mentionedAt: null }))
        ]
      }),
    chunks: (ids) =>
      Effect.sync(() =>
        ids.flatMap((id) => {
          const chunk = records.chunk(id)
          return chunk === undefined ? [] : [{ id, chunkIndex: chunk.chunkIndex, text: chunk.text }]
        })
      ),
    factsAbout: (names) => Effect.sync(() => records.factsNaming(names, stateHistoryLimit, scope.now))
  }
}

export const fromSql = (options: {
  readonly sql: SqlClient.SqlClient
  readonly brains: BankBrains["Service"]
  readonly bankId: string
  readonly scope: RecallScope
  readonly brain: Option.Option<Brain>
  readonly rowsByIds: (ids: ReadonlyArray<string>, where?: Fragment) => Effect.Effect<ReadonlyArray<UnitRow>>
  readonly vectors: { readonly model: string; readonly dimensions: number }
  /** Exact nearest neighbours (a scan) instead of the HNSW index: what the parity tests compare with. */
  readonly exactVectors?: boolean | undefined
}): RecallSource => {
  const { sql, bankId, scope } = options
  const provide = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | BankBrains>) =>
    Effect.orDie(effect).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(BankBrains, options.brains)
    )
  return {
    name: "sql",
    semantic: (vector, depth) =>
      provide(semantic({
        scope: scope.sql,
        vector,
        dimensions: options.vectors.dimensions,
        model: options.vectors.model,
        depth,
        exact: options.exactVectors === true
      })),
    similarities: (vector, ids) =>
      provide(similarities({ ids, vector, dimensions: options.vectors.dimensions, model: options.vectors.model })),
    keyword: (query, expansion, depth) =>
      provide(keywordInMemory({
        brain: options.brain,
        sqlScope: scope.sql,
        bankId,
        query,
        expansion,
        types: scope.types,
        tags: scope.tags,
        depth,
        now: scope.now
      })),
    temporal: (window, depth) => provide(temporal({ scope: scope.sql, start: window.start, end: window.end, depth })),
    rows: (ids, inScope) => options.rowsByIds(ids, inScope ? scope.sql : undefined),
    entityObservations: (names) => provide(entityObservationsInSql(bankId, names, new Date(scope.now))),
    chunks: (ids) => provide(chunksInSql(ids)),
    factsAbout: (names) =>
      names.length === 0
        ? Effect.succeed([])
        : Effect.flatMap(
          provide(sql<{ id: string }>`
            SELECT u.id FROM entities e
            JOIN unit_entities ue ON ue.entity_id = e.id
            JOIN memory_units u ON u.id = ue.unit_id
            WHERE e.bank_id = ${bankId} AND e.canonical_name IN ${
            sql.in(names)
          } AND u.fact_type IN ('world', 'experience')
              AND (u.expires_at IS NULL OR u.expires_at > ${new Date(scope.now)})
            GROUP BY u.id, u.occurred_start, u.mentioned_at
            ORDER BY coalesce(u.occurred_start, u.mentioned_at) DESC NULLS LAST, u.id
            LIMIT ${stateHistoryLimit}`),
          (rows) => options.rowsByIds(rows.map((row) => row.id))
        )
  }
}
