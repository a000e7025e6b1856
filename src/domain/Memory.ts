/**
 * Memories as clients send and read them: the retain request (MemoryItem), memory units as listed, fetched
 * and recalled, documents, chunks, entities and tags. Field names follow the spec exactly.
 */
import { Schema } from "effect"

export const FactType = Schema.Literals(["world", "experience", "observation", "opinion"])
export type FactType = typeof FactType.Type

/** Year 0000 parses in JavaScript but PostgreSQL refuses it (NaN fails the comparison too). */
const firstStorableTime = Date.parse("0001-01-01T00:00:00Z")

/** ISO 8601 date-time (a date alone is accepted as midnight UTC), or the literal `unset` for timeless content. */
/**
 * When a memory expires: an ISO 8601 date-time (a date alone is midnight UTC). From that moment no read returns the
 * memory (recall, reflect, list, get), and the expiry sweep deletes it with what was derived from it.
 */
export const ExpiresAt = Schema.String.check(
  Schema.makeFilter((value: string) =>
    /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) &&
      Number.isFinite(Date.parse(value)) && Date.parse(value) >= firstStorableTime
      ? undefined
      : "expected an ISO 8601 date-time (e.g. 2030-05-07T14:30:00Z)"
  )
).annotate({ description: "ISO 8601 date-time at which the memory is forgotten; absent or null: never" })

export const ItemTimestamp = Schema.String.check(
  Schema.makeFilter((value: string) =>
    value === "unset" || (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) &&
        Date.parse(value) >= firstStorableTime)
      ? undefined
      : "expected an ISO 8601 date-time from year 0001 on (e.g. 2024-05-07T14:30:00Z) or \"unset\""
  )
).annotate({ description: "ISO 8601 date-time; null means now; \"unset\" means timeless" })

/**
 * A caller-chosen document id. Bounded because it is a key of a B-tree index, whose entries must fit in a third
 * of a page (a 2 MB id failed the insert with a database error): 512 characters are at most 2 KB of UTF-8.
 */
export const DocumentId = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(512, { message: "document_id must be at most 512 characters" })
)

const StringMap = Schema.Record(Schema.String, Schema.String)

export const EntityInput = Schema.Struct({
  text: Schema.String.check(Schema.isMinLength(1)),
  type: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "EntityInput" })

export const ObservationScopes = Schema.Union([
  Schema.Literals(["per_tag", "combined", "all_combinations"]),
  Schema.Array(Schema.Array(Schema.String))
]).annotate({ description: "per_tag, combined, all_combinations, or a custom list of tag lists" })

export const UpdateMode = Schema.Literals(["replace", "append"])

/** Bounds that keep one request from monopolising the service; larger content belongs in file retain. */
export const retainLimits = { maxContentChars: 1_000_000, maxItems: 10_000 }

export const MemoryItem = Schema.Struct({
  content: Schema.String.check(
    Schema.isMinLength(1, { message: "content must not be empty" }),
    Schema.isMaxLength(retainLimits.maxContentChars, {
      message:
        `content must be at most ${retainLimits.maxContentChars} characters (use file retain for larger documents)`
    })
  ),
  timestamp: Schema.optionalKey(Schema.NullOr(ItemTimestamp)),
  context: Schema.optionalKey(Schema.NullOr(Schema.String)),
  metadata: Schema.optionalKey(Schema.NullOr(StringMap)),
  document_id: Schema.optionalKey(Schema.NullOr(DocumentId)),
  entities: Schema.optionalKey(Schema.NullOr(Schema.Array(EntityInput))),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  observation_scopes: Schema.optionalKey(Schema.NullOr(ObservationScopes)),
  update_mode: Schema.optionalKey(Schema.NullOr(UpdateMode)),
  expires_at: Schema.optionalKey(Schema.NullOr(ExpiresAt))
}).annotate({ identifier: "MemoryItem" })
export type MemoryItem = typeof MemoryItem.Type

export const RetainRequest = Schema.Struct({
  items: Schema.Array(MemoryItem).check(
    Schema.isMinLength(1, { message: "items must not be empty" }),
    Schema.isMaxLength(retainLimits.maxItems, { message: `at most ${retainLimits.maxItems} items per request` })
  ),
  async: Schema.optionalKey(Schema.Boolean),
  document_tags: Schema.optionalKey(
    Schema.NullOr(Schema.Array(Schema.String)).annotate({
      description: "Deprecated: tags added to every item"
    })
  )
}).annotate({ identifier: "RetainRequest" })
export type RetainRequest = typeof RetainRequest.Type

export const TokenUsage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  total_tokens: Schema.Int
}).annotate({ identifier: "TokenUsage" })

export const RetainResponse = Schema.Struct({
  success: Schema.Boolean,
  bank_id: Schema.String,
  items_count: Schema.Int,
  async: Schema.Boolean,
  operation_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  usage: Schema.optionalKey(Schema.NullOr(TokenUsage)),
  memories_created: Schema.optionalKey(Schema.Int),
  duplicates_skipped: Schema.optionalKey(Schema.Int)
}).annotate({ identifier: "RetainResponse" })

const Nullable = Schema.NullOr(Schema.String)

export const MemoryUnitView = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  type: Schema.NullOr(Schema.String),
  fact_type: Schema.String,
  entities: Schema.NullOr(Schema.Array(Schema.String)),
  context: Nullable,
  occurred_start: Nullable,
  occurred_end: Nullable,
  mentioned_at: Nullable,
  document_id: Nullable,
  metadata: Schema.NullOr(StringMap),
  chunk_id: Nullable,
  tags: Schema.NullOr(Schema.Array(Schema.String)),
  source_fact_ids: Schema.NullOr(Schema.Array(Schema.String)),
  confidence: Schema.NullOr(Schema.Number),
  created_at: Nullable,
  superseded_by: Schema.optionalKey(Nullable.annotate({
    description: "The newer memory that replaced this one: a contradiction corrected at retain (history is kept)"
  })),
  expires_at: Schema.optionalKey(Schema.String.annotate({
    description: "When the memory is forgotten (present only on memories that expire)"
  }))
}).annotate({ identifier: "MemoryUnit" })
export type MemoryUnitView = typeof MemoryUnitView.Type

export const MemoryDetail = Schema.Struct({
  ...MemoryUnitView.fields,
  state: Schema.optionalKey(
    Schema.Literals(["valid", "invalidated"]).annotate({
      description: "Curation state: invalidated memories are kept for audit, out of recall (PATCH restores them)"
    })
  ),
  invalidation_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
  invalidated_at: Schema.optionalKey(Schema.NullOr(Schema.String)),
  history: Schema.Array(Schema.Unknown).annotate({ description: "Deprecated: always empty" })
}).annotate({ identifier: "MemoryDetail" })

export const MemoryListResponse = Schema.Struct({
  items: Schema.Array(MemoryUnitView),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "MemoryListResponse" })

export const ChunkResponse = Schema.Struct({
  id: Schema.String,
  chunk_id: Schema.String,
  bank_id: Schema.String,
  document_id: Nullable,
  chunk_index: Schema.Int,
  text: Schema.String,
  chunk_text: Schema.String.annotate({ description: "the same as text, under the name Hindsight clients read" }),
  created_at: Nullable
}).annotate({ identifier: "ChunkResponse" })

export const DocumentView = Schema.Struct({
  id: Schema.String,
  document_id: Schema.String,
  bank_id: Schema.String,
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  tags: Schema.Array(Schema.String),
  context: Nullable,
  memory_unit_count: Schema.Int,
  chunk_count: Schema.Int,
  created_at: Nullable,
  updated_at: Nullable
}).annotate({ identifier: "Document" })

export const DocumentDetail = Schema.Struct({
  ...DocumentView.fields,
  original_text: Nullable,
  content_hash: Nullable.annotate({ description: "SHA-256 (hex) of original_text; null when no text is stored" })
}).annotate({ identifier: "DocumentDetail" })

export const DocumentListResponse = Schema.Struct({
  items: Schema.Array(DocumentView),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "DocumentListResponse" })

export const EntityListItem = Schema.Struct({
  id: Schema.String,
  canonical_name: Schema.String,
  entity_type: Nullable,
  mention_count: Schema.Int,
  first_seen: Nullable,
  last_seen: Nullable
}).annotate({ identifier: "EntityListItem" })

export const EntityListResponse = Schema.Struct({
  items: Schema.Array(EntityListItem),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "EntityListResponse" })

export const EntityDetailResponse = Schema.Struct({
  id: Schema.String,
  canonical_name: Schema.String,
  mention_count: Schema.Int,
  first_seen: Nullable,
  last_seen: Nullable,
  metadata: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  observations: Schema.Array(Schema.Struct({ text: Schema.String, mentioned_at: Nullable }))
}).annotate({ identifier: "EntityDetailResponse" })

export const TagListResponse = Schema.Struct({
  items: Schema.Array(Schema.Struct({ tag: Schema.String, count: Schema.Int })),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "TagListResponse" })
