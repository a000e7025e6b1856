/** Schemas of the brain runtime routes: status, import, validate and learn (core-api.md "Brain runtime"). */
import { Schema } from "effect"

export const BrainRuntimeStatusResponse = Schema.Struct({
  enabled: Schema.Boolean.annotate({ description: "the brain runtime is on and the bank's breaker is not open" }),
  circuit_open: Schema.Boolean,
  circuit_state: Schema.Literals(["closed", "open", "half_open"]),
  failure_count: Schema.Int.annotate({ description: "failed brain builds since the last success" }),
  bank_id: Schema.String,
  file_path: Schema.String.annotate({ description: "the bank's `.brain` file name (never the server's directory)" }),
  exists: Schema.Boolean,
  size_bytes: Schema.Int,
  last_modified_at: Schema.NullOr(Schema.String),
  source_snapshot_id: Schema.NullOr(Schema.String).annotate({
    description: "the data version the `.brain` file was taken at (memories.seq.change)"
  }),
  generated_at: Schema.NullOr(Schema.String),
  native_library_loaded: Schema.Boolean.annotate({ description: "always false: the brain runs in TypeScript" }),
  format_version: Schema.NullOr(Schema.String),
  model_signature: Schema.NullOr(Schema.String),
  compatibility_reason: Schema.NullOr(Schema.String).annotate({
    description: "why the file cannot be installed as it is into this bank now; null when it can"
  }),
  metrics: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "BrainRuntimeStatusResponse" })

export const BrainImportResponse = Schema.Struct({
  bank_id: Schema.String,
  file_path: Schema.String.annotate({
    description: "the name the file was stored under (never the server's directory)"
  }),
  size_bytes: Schema.Int,
  format_version: Schema.NullOr(Schema.String),
  installed: Schema.Boolean.annotate({
    description: "the file's graph and keyword index were installed as they are (no rebuild on the next recall)"
  }),
  install_reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "BrainImportResponse" })

export const BrainImportValidationResponse = Schema.Struct({
  valid: Schema.Boolean,
  version: Schema.NullOr(Schema.Int),
  reason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "BrainImportValidationResponse" })

export const LearningType = Schema.Literals(["auto", "distilled", "structured", "raw_mirror"])
export const BrainMode = Schema.Literals(["incremental", "full_copy"])

export const BrainLearnRequest = Schema.Struct({
  remote_endpoint: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({
    description: "base URL of the remote engram instance, e.g. https://memory.example.com"
  }),
  remote_bank_id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(128)),
  remote_api_key: Schema.optionalKey(Schema.NullOr(Schema.String)),
  learning_type: Schema.optionalKey(LearningType),
  mode: Schema.optionalKey(BrainMode),
  horizon_hours: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 8760 })))
}).annotate({ identifier: "BrainLearnRequest" })
export type BrainLearnRequest = typeof BrainLearnRequest.Type

export const BrainLearnResponse = Schema.Struct({
  operation_id: Schema.String,
  deduplicated: Schema.Boolean
}).annotate({ identifier: "BrainLearnResponse" })

export const BrainExportQuery = Schema.Struct({
  mode: Schema.optionalKey(BrainMode)
})
