/**
 * Requests and responses of the memory operations beyond retain/recall/list: curating one memory (edit,
 * invalidate, restore), a dry-run extraction, the ingestion time series, the entity co-occurrence graph and the
 * bank's observation scopes. Field names follow the published Hindsight client.
 */
import { Schema } from "effect"
import { ExtractionMode } from "./Bank.ts"
import { ExpiresAt, ItemTimestamp, MemoryUnitView } from "./Memory.ts"

const firstStorableTime = Date.parse("0001-01-01T00:00:00Z")

/** An ISO 8601 date or date-time, or "" to clear the field. */
export const ClearableTime = Schema.String.check(
  Schema.makeFilter((value: string) =>
    value === "" || (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) &&
        Date.parse(value) >= firstStorableTime)
      ? undefined
      : "expected an ISO 8601 date-time (e.g. 2024-05-07T14:30:00Z), or \"\" to clear it"
  )
)

export const MemoryState = Schema.Literals(["valid", "invalidated"])
export type MemoryState = typeof MemoryState.Type

const EntityName = Schema.String.check(
  Schema.isMinLength(1, { message: "an entity name must not be empty" }),
  Schema.isMaxLength(256, { message: "an entity name must be at most 256 characters" })
)

export const UpdateMemoryRequest = Schema.Struct({
  text: Schema.optionalKey(Schema.NullOr(Schema.String.check(
    Schema.isMinLength(1, { message: "text must not be empty" }),
    Schema.isMaxLength(100_000, { message: "text must be at most 100000 characters" })
  ))),
  context: Schema.optionalKey(Schema.NullOr(Schema.String)),
  occurred_start: Schema.optionalKey(Schema.NullOr(ClearableTime)),
  occurred_end: Schema.optionalKey(Schema.NullOr(ClearableTime)),
  fact_type: Schema.optionalKey(Schema.NullOr(Schema.Literals(["world", "experience"]))),
  entities: Schema.optionalKey(Schema.NullOr(Schema.Array(EntityName))),
  state: Schema.optionalKey(Schema.NullOr(MemoryState)),
  reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(
    Schema.isMaxLength(2000, { message: "reason must be at most 2000 characters" })
  ))),
  /** "" clears the expiry; a time must be in the future (checked against the clock by the curation service). */
  expires_at: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.Literal(""), ExpiresAt])))
}).annotate({ identifier: "UpdateMemoryRequest" })
export type UpdateMemoryRequest = typeof UpdateMemoryRequest.Type

export const CuratedMemory = Schema.Struct({
  ...MemoryUnitView.fields,
  state: MemoryState,
  invalidation_reason: Schema.NullOr(Schema.String),
  invalidated_at: Schema.NullOr(Schema.String),
  history: Schema.Array(Schema.Unknown).annotate({ description: "Deprecated: always empty" })
}).annotate({ identifier: "CuratedMemory" })
export type CuratedMemory = typeof CuratedMemory.Type

export const DryRunExtractRequest = Schema.Struct({
  content: Schema.String.check(
    Schema.isMinLength(1, { message: "content must not be empty" }),
    Schema.isMaxLength(1_000_000, { message: "content must be at most 1000000 characters" })
  ),
  context: Schema.optionalKey(Schema.String),
  timestamp: Schema.optionalKey(Schema.NullOr(ItemTimestamp)),
  agent_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  retain_mission: Schema.optionalKey(Schema.NullOr(Schema.String)),
  retain_extraction_mode: Schema.optionalKey(Schema.NullOr(ExtractionMode)),
  retain_custom_instructions: Schema.optionalKey(Schema.NullOr(Schema.String)),
  retain_extract_causal_links: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  retain_chunk_size: Schema.optionalKey(
    Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 64, maximum: 100_000 })))
  ),
  entity_labels: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Unknown))),
  entities_allow_free_form: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  llm_output_language: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "DryRunExtractRequest" })
export type DryRunExtractRequest = typeof DryRunExtractRequest.Type

export const DryRunFact = Schema.Struct({
  text: Schema.String,
  fact_type: Schema.String,
  occurred_start: Schema.NullOr(Schema.String),
  occurred_end: Schema.NullOr(Schema.String),
  entities: Schema.Array(Schema.String)
}).annotate({ identifier: "DryRunFact" })

export const DryRunExtractResult = Schema.Struct({
  facts: Schema.Array(DryRunFact),
  usage: Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int, total_tokens: Schema.Int })
}).annotate({ identifier: "DryRunExtractResult" })

export const TimeseriesPeriod = Schema.Literals(["1h", "12h", "1d", "7d", "30d", "90d"])
export type TimeseriesPeriod = typeof TimeseriesPeriod.Type
export const TimeseriesField = Schema.Literals(["created_at", "mentioned_at", "occurred_start"])
export type TimeseriesField = typeof TimeseriesField.Type

export const MemoriesTimeseries = Schema.Struct({
  bank_id: Schema.String,
  period: TimeseriesPeriod,
  trunc: Schema.Literals(["minute", "hour", "day"]),
  time_field: TimeseriesField,
  buckets: Schema.Array(Schema.Struct({
    time: Schema.String,
    world: Schema.Int,
    experience: Schema.Int,
    observation: Schema.Int
  }))
}).annotate({ identifier: "MemoriesTimeseries" })

export const EntityGraphResponse = Schema.Struct({
  nodes: Schema.Array(Schema.Struct({
    id: Schema.String,
    label: Schema.String,
    entity_type: Schema.NullOr(Schema.String),
    mention_count: Schema.Int
  })),
  edges: Schema.Array(Schema.Struct({
    source: Schema.String,
    target: Schema.String,
    cooccurrence_count: Schema.Int
  })),
  total_entities: Schema.Int,
  total_edges: Schema.Int,
  limit: Schema.Int
}).annotate({ identifier: "EntityGraphResponse" })

export const ObservationScopesResponse = Schema.Struct({
  scopes: Schema.Array(Schema.Struct({ tags: Schema.Array(Schema.String), count: Schema.Int }))
}).annotate({ identifier: "ObservationScopesResponse" })
