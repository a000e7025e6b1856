/**
 * Dataset curation (forge/taste) as clients see it: datasets, sets, and the request and response bodies of
 * import, transform, generate, retain, export and the catalog. Payload shapes per schema type are checked in
 * `src/datasets/Payloads.ts`, not here, so an import can report every bad row with its line number.
 */
import { Schema } from "effect"

const NonBlank = (field: string, max: number) =>
  Schema.String.check(
    Schema.makeFilter((value: string) => value.trim() !== "" || `${field} must not be empty`),
    Schema.isMaxLength(max, { message: `${field} must be at most ${max} characters` })
  )

export const TasteTag = NonBlank("tag", 200)
export const TasteTags = Schema.Array(TasteTag).check(Schema.isMaxLength(100, { message: "at most 100 tags" }))

/** `openai_chat` is the reference service's name for `chat_messages`; it is accepted and stored as the latter. */
export const SchemaTypeInput = Schema.Literals(["chat_messages", "qa_pair", "custom", "openai_chat"])
export const SchemaType = Schema.Literals(["chat_messages", "qa_pair", "custom"])
export type SchemaType = typeof SchemaType.Type

export const SetStatus = Schema.Literals(["draft", "ready", "retained", "archived"])
export type SetStatus = typeof SetStatus.Type

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const DatasetCreate = Schema.Struct({
  name: NonBlank("name", 200),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(5000)))),
  schema_type: Schema.optionalKey(
    SchemaTypeInput.annotate({ description: "default chat_messages; fixed at creation" })
  ),
  taste_tags: Schema.optionalKey(Schema.NullOr(TasteTags))
}).annotate({ identifier: "DatasetCreate" })
export type DatasetCreate = typeof DatasetCreate.Type

/** `schema_type` is not here: it is fixed at creation (sending it is refused). Absent or null leaves a field. */
export const DatasetUpdate = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(NonBlank("name", 200))),
  description: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(5000)))),
  taste_tags: Schema.optionalKey(Schema.NullOr(TasteTags)),
  taste_profile: Schema.optionalKey(Schema.NullOr(JsonObject)),
  schema_type: Schema.optionalKey(Schema.Unknown.annotate({ description: "refused: the schema type is immutable" }))
}).annotate({ identifier: "DatasetUpdate" })
export type DatasetUpdate = typeof DatasetUpdate.Type

export const DatasetResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.String,
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  schema_type: SchemaType,
  taste_tags: Schema.Array(Schema.String),
  taste_profile: JsonObject,
  set_count: Schema.Int,
  seed_count: Schema.Int,
  variant_count: Schema.Int,
  status_counts: Schema.Record(Schema.String, Schema.Int),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "DatasetResponse" })
export type DatasetResponse = typeof DatasetResponse.Type

export const DatasetListResponse = Schema.Struct({ datasets: Schema.Array(DatasetResponse) })
  .annotate({ identifier: "DatasetListResponse" })

export const DatasetDeleted = Schema.Struct({
  deleted: Schema.Boolean,
  dataset_id: Schema.String,
  sets_deleted: Schema.Int
})
  .annotate({ identifier: "DatasetDeleted" })

export const TransformLogEntry = Schema.Struct({
  op: Schema.String,
  params: JsonObject,
  before_hash: Schema.String,
  after_hash: Schema.String,
  model: Schema.NullOr(Schema.String),
  at: Schema.String,
  operation_id: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "TransformLogEntry" })
export type TransformLogEntry = typeof TransformLogEntry.Type

export const SetResponse = Schema.Struct({
  id: Schema.String,
  dataset_id: Schema.String,
  set_key: Schema.String,
  variant_index: Schema.Int,
  parent_set_id: Schema.NullOr(Schema.String),
  source_payload: JsonObject,
  working_payload: JsonObject,
  transform_log: Schema.Array(TransformLogEntry),
  status: SetStatus,
  taste_tags: Schema.Array(Schema.String),
  memory_unit_ids: Schema.Array(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "TasteSet" })
export type SetResponse = typeof SetResponse.Type

export const SetListResponse = Schema.Struct({
  dataset_id: Schema.String,
  sets: Schema.Array(SetResponse),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "TasteSetList" })

export const SetImport = Schema.Struct({
  jsonl: Schema.optionalKey(
    Schema.String.annotate({ description: "one JSON object per line (blank lines are skipped)" })
  ),
  sets: Schema.optionalKey(Schema.Array(Schema.Unknown).annotate({ description: "payload objects" })),
  set_key_prefix: Schema.optionalKey(Schema.NullOr(
    Schema.String.check(Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, {
      message: "must be 1-64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
    }))
  )),
  taste_tags: Schema.optionalKey(Schema.NullOr(TasteTags))
}).annotate({ identifier: "TasteSetImport" })
export type SetImport = typeof SetImport.Type

export const SetImportResponse = Schema.Struct({
  dataset_id: Schema.String,
  imported_count: Schema.Int,
  sets: Schema.Array(SetResponse)
}).annotate({ identifier: "TasteSetImportResponse" })

export const SetUpdate = Schema.Struct({
  working_payload: Schema.optionalKey(
    Schema.Unknown.annotate({ description: "validated against the dataset's schema type" })
  ),
  taste_tags: Schema.optionalKey(Schema.NullOr(TasteTags)),
  status: Schema.optionalKey(SetStatus.annotate({
    description: "draft ↔ ready, draft|ready|retained → archived, archived → draft; `retained` only through POST retain"
  }))
}).annotate({ identifier: "TasteSetUpdate" })
export type SetUpdate = typeof SetUpdate.Type

export const TransformOpId = Schema.Literals(["spellfix_llm", "tone_shift", "raw"])
export type TransformOpId = typeof TransformOpId.Type

export const TransformOp = Schema.Struct({
  op: TransformOpId,
  params: Schema.optionalKey(Schema.NullOr(JsonObject))
}).annotate({ identifier: "TasteTransformOp" })

const SetIds = Schema.Array(Schema.String.check(Schema.isMaxLength(128))).check(
  Schema.isMaxLength(1000, { message: "at most 1000 set ids per request" })
)

export const TransformRequest = Schema.Struct({
  dataset_id: Schema.String,
  set_ids: Schema.optionalKey(Schema.NullOr(SetIds)),
  ops: Schema.Array(TransformOp).check(
    Schema.isMinLength(1, { message: "ops must not be empty" }),
    Schema.isMaxLength(10, { message: "at most 10 ops in a chain" })
  ),
  preview: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "TasteTransformRequest" })
export type TransformRequest = typeof TransformRequest.Type

export const TransformItem = Schema.Struct({
  set_id: Schema.String,
  set_key: Schema.String,
  before: JsonObject,
  after: Schema.NullOr(JsonObject),
  model: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String)
}).annotate({ identifier: "TasteTransformItem" })
export type TransformItem = typeof TransformItem.Type

export const TransformResponse = Schema.Struct({
  preview: Schema.Boolean,
  async: Schema.Boolean,
  operation_id: Schema.NullOr(Schema.String),
  items: Schema.Array(TransformItem),
  updated_count: Schema.Int,
  failed_count: Schema.Int,
  processed_count: Schema.Int,
  total_in_dataset: Schema.Int
}).annotate({ identifier: "TasteTransformResponse" })
export type TransformResponse = typeof TransformResponse.Type

export const GenerateRequest = Schema.Struct({
  set_ids: SetIds.check(Schema.isMinLength(1, { message: "set_ids must name at least one seed set" })),
  count: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 32 })).annotate({
      description: "variants per seed, 1-32 (default 8)"
    })
  ),
  options: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    instruction: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2000))))
  })))
}).annotate({ identifier: "TasteGenerateRequest" })
export type GenerateRequest = typeof GenerateRequest.Type

export const GenerateFailure = Schema.Struct({ set_id: Schema.String, error: Schema.String })

export const GenerateResponse = Schema.Struct({
  async: Schema.Boolean,
  operation_id: Schema.NullOr(Schema.String),
  created_count: Schema.Int,
  sets: Schema.Array(SetResponse),
  parent_count: Schema.Int,
  count_per_parent: Schema.Int,
  failures: Schema.Array(GenerateFailure)
}).annotate({ identifier: "TasteGenerateResponse" })
export type GenerateResponse = typeof GenerateResponse.Type

export const RetainSetsRequest = Schema.Struct({
  set_ids: SetIds.check(Schema.isMinLength(1, { message: "set_ids must name at least one set" }))
}).annotate({ identifier: "TasteRetainRequest" })

export const RetainSetsResponse = Schema.Struct({
  retained_count: Schema.Int,
  memory_unit_ids: Schema.Array(Schema.String),
  sets: Schema.Array(SetResponse)
}).annotate({ identifier: "TasteRetainResponse" })

export const ExportAdapterId = Schema.Literals(["chat_messages_jsonl", "openai_chat_jsonl", "atr_jsonl"])
export type ExportAdapterId = typeof ExportAdapterId.Type

export const ExportRequest = Schema.Struct({
  dataset_id: Schema.String,
  adapter_id: Schema.optionalKey(ExportAdapterId.annotate({
    description: "default chat_messages_jsonl; openai_chat_jsonl is an alias of it"
  })),
  set_ids: Schema.optionalKey(Schema.NullOr(SetIds)),
  options: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    quality_threshold: Schema.optionalKey(
      Schema.NullOr(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })))
    ),
    include_archived: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
  })))
}).annotate({ identifier: "TasteExportRequest" })
export type ExportRequest = typeof ExportRequest.Type

export const QualitySummary = Schema.Struct({
  total: Schema.Int,
  exportable: Schema.Int,
  held_back: Schema.Int,
  pass_rate: Schema.Number,
  avg_score: Schema.Number,
  issue_counts: Schema.Record(Schema.String, Schema.Int)
})

export const ExportResponse = Schema.Struct({
  adapter_id: ExportAdapterId,
  record_count: Schema.Int,
  exportable_count: Schema.Int,
  output_path: Schema.Null,
  content: Schema.String,
  lineage: JsonObject,
  quality_summary: QualitySummary
}).annotate({ identifier: "TasteExportResponse" })
export type ExportResponse = typeof ExportResponse.Type

export const CatalogResponse = Schema.Struct({
  schema_types: Schema.Array(Schema.Struct({
    id: SchemaType,
    title: Schema.String,
    description: Schema.String,
    aliases: Schema.Array(Schema.String)
  })),
  transform_ops: Schema.Array(Schema.Struct({
    op_id: TransformOpId,
    title: Schema.String,
    description: Schema.String,
    params: JsonObject,
    requires_llm: Schema.Boolean
  })),
  exporters: Schema.Array(Schema.Struct({
    adapter_id: Schema.String,
    title: Schema.String,
    description: Schema.String,
    aliases: Schema.Array(Schema.String)
  })),
  llm_available: Schema.Boolean,
  limits: Schema.Record(Schema.String, Schema.Int)
}).annotate({ identifier: "TasteCatalog" })
export type CatalogResponse = typeof CatalogResponse.Type
