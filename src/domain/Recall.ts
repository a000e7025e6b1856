/**
 * Recall as clients call it: RecallRequest (query, types, budget, token budget, time, tags or tag groups,
 * includes, trace) and RecallResponse (results, entities, chunks, source facts, trace), as the spec names them.
 */
import { Schema } from "effect"
import { ItemTimestamp } from "./Memory.ts"

export const TagsMatch = Schema.Literals(["any", "all", "any_strict", "all_strict"])
export type TagsMatch = typeof TagsMatch.Type

export type TagGroup =
  | { readonly tags: ReadonlyArray<string>; readonly match?: TagsMatch | undefined }
  | { readonly and: ReadonlyArray<TagGroup> }
  | { readonly or: ReadonlyArray<TagGroup> }
  | { readonly not: TagGroup }

export const TagGroup: Schema.Codec<TagGroup> = Schema.Union([
  Schema.Struct({ tags: Schema.Array(Schema.String), match: Schema.optionalKey(TagsMatch) }),
  Schema.Struct({ and: Schema.Array(Schema.suspend((): Schema.Codec<TagGroup> => TagGroup)) }),
  Schema.Struct({ or: Schema.Array(Schema.suspend((): Schema.Codec<TagGroup> => TagGroup)) }),
  Schema.Struct({ not: Schema.suspend((): Schema.Codec<TagGroup> => TagGroup) })
]).annotate({ identifier: "TagGroup" }) as unknown as Schema.Codec<TagGroup>

export const RecallType = Schema.Literals(["world", "experience", "observation", "opinion"])
export const Budget = Schema.Literals(["low", "mid", "high"])
export type Budget = typeof Budget.Type

const TokenLimit = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
/** -1 means unlimited. */
const TokenLimitOrUnlimited = Schema.Int.check(Schema.isGreaterThanOrEqualTo(-1))

export const RecallInclude = Schema.Struct({
  entities: Schema.optionalKey(Schema.NullOr(Schema.Struct({ max_tokens: Schema.optionalKey(TokenLimit) }))),
  chunks: Schema.optionalKey(Schema.NullOr(Schema.Struct({ max_tokens: Schema.optionalKey(TokenLimit) }))),
  source_facts: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    max_tokens: Schema.optionalKey(TokenLimitOrUnlimited),
    max_tokens_per_observation: Schema.optionalKey(TokenLimitOrUnlimited)
  })))
}).annotate({ identifier: "RecallInclude" })

export const MinScore = Schema.Struct({
  threshold: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
    description: "results whose relevance (0–1) is below this are dropped"
  })
}).annotate({ identifier: "MinScoreFilter" })

export const RecallRequest = Schema.Struct({
  query: Schema.String.check(Schema.makeFilter((value: string) => value.trim() !== "" || "query must not be empty")),
  branch_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  types: Schema.optionalKey(Schema.NullOr(Schema.Array(RecallType))),
  budget: Schema.optionalKey(Budget),
  max_tokens: Schema.optionalKey(TokenLimit),
  trace: Schema.optionalKey(Schema.Boolean),
  query_timestamp: Schema.optionalKey(Schema.NullOr(ItemTimestamp)),
  include: Schema.optionalKey(RecallInclude),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  tags_match: Schema.optionalKey(TagsMatch),
  tag_groups: Schema.optionalKey(Schema.NullOr(Schema.Array(TagGroup))),
  prefer_observations: Schema.optionalKey(Schema.Boolean),
  min_score: Schema.optionalKey(Schema.NullOr(MinScore))
}).annotate({ identifier: "RecallRequest" })
export type RecallRequest = typeof RecallRequest.Type

const Nullable = Schema.NullOr(Schema.String)

export const RecallResult = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  type: Nullable,
  entities: Schema.NullOr(Schema.Array(Schema.String)),
  context: Nullable,
  occurred_start: Nullable,
  occurred_end: Nullable,
  mentioned_at: Nullable,
  document_id: Nullable,
  metadata: Schema.NullOr(Schema.Record(Schema.String, Schema.String)),
  chunk_id: Nullable,
  tags: Schema.NullOr(Schema.Array(Schema.String)),
  source_fact_ids: Schema.NullOr(Schema.Array(Schema.String)),
  score: Schema.optionalKey(Schema.Number),
  scores: Schema.optionalKey(Schema.NullOr(
    Schema.Struct({
      final: Schema.Number.annotate({ description: "the score results are ranked by (the same as score)" }),
      reranker: Schema.NullOr(Schema.Number),
      semantic: Schema.NullOr(Schema.Number).annotate({ description: "vector similarity; null if not surfaced by it" }),
      keyword: Schema.NullOr(Schema.Number).annotate({ description: "full-text score; null if not surfaced by it" })
    }).annotate({ identifier: "RecallScores" })
  )),
  superseded_by: Schema.optionalKey(Schema.String.annotate({
    description: "Present when a newer memory replaced this one; such memories rank below current ones"
  }))
}).annotate({ identifier: "RecallResult" })
export type RecallResult = typeof RecallResult.Type

export const RecallResponse = Schema.Struct({
  results: Schema.Array(RecallResult),
  trace: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  entities: Schema.NullOr(Schema.Record(
    Schema.String,
    Schema.Struct({
      canonical_name: Schema.String,
      entity_id: Schema.String,
      observations: Schema.Array(Schema.Struct({ text: Schema.String, mentioned_at: Nullable }))
    })
  )),
  chunks: Schema.NullOr(Schema.Record(
    Schema.String,
    Schema.Struct({
      id: Schema.String,
      chunk_index: Schema.Int,
      text: Schema.String
    })
  )),
  source_facts: Schema.NullOr(Schema.Record(Schema.String, RecallResult)),
  source_facts_truncated: Schema.optionalKey(Schema.Boolean.annotate({
    description: "set when source facts were asked for: true when the token budget left out some of the facts the " +
      "results' source_fact_ids name"
  }))
}).annotate({ identifier: "RecallResponse" })
export type RecallResponse = typeof RecallResponse.Type
