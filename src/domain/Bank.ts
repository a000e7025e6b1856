/**
 * The bank resource as clients send and receive it: the create/update body with its validation rules, the
 * list item, the deprecated profile, the statistics and the per-bank configuration view.
 */
import { Schema } from "effect"
import { type EntitySettingsOverrides, EntitySettingsUpdate } from "./EntitySettings.ts"
import { type PipelineOverrides, PipelineSettingsUpdate } from "./PipelineSettings.ts"
import { DreamSettingsUpdate } from "./Dream.ts"
import type { DreamOverrides } from "../dreams/DreamConfig.ts"
import { type RetentionSettings, RetentionSettingsUpdate } from "./Retention.ts"

/** A bank id appears in URLs; keep it to characters that need no escaping anywhere. */
export const BankId = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(128),
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._:@-]*$/, {
    message: "must start with a letter or digit and contain only letters, digits, '.', '_', ':', '@' or '-'"
  })
)

export const Trait = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 }))

export const DispositionTraits = Schema.Struct({
  skepticism: Trait.annotate({ description: "1 trusting … 5 skeptical" }),
  literalism: Trait.annotate({ description: "1 flexible … 5 literal" }),
  empathy: Trait.annotate({ description: "1 detached … 5 empathetic" })
}).annotate({ identifier: "DispositionTraits" })
export type DispositionTraits = typeof DispositionTraits.Type

export const defaultDisposition: DispositionTraits = { skepticism: 3, literalism: 3, empathy: 3 }

export const ExtractionMode = Schema.Literals(["concise", "verbose", "custom"])
export type ExtractionMode = typeof ExtractionMode.Type

const nullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

/** Every field optional and nullable, as in the spec; `null` and absent both mean "leave unchanged". */
export const BankUpdate = Schema.Struct({
  name: nullable(Schema.String),
  reflect_mission: nullable(Schema.String),
  retain_mission: nullable(Schema.String),
  retain_extraction_mode: nullable(ExtractionMode),
  retain_custom_instructions: nullable(Schema.String),
  retain_chunk_size: nullable(Schema.Int.check(Schema.isBetween({ minimum: 16, maximum: 65536 }))),
  bank_preset: nullable(Schema.String),
  enable_observations: nullable(Schema.Boolean),
  observations_mission: nullable(Schema.String),
  disposition: nullable(DispositionTraits),
  disposition_skepticism: nullable(Trait),
  disposition_literalism: nullable(Trait),
  disposition_empathy: nullable(Trait),
  mission: nullable(Schema.String.annotate({ description: "Deprecated: use reflect_mission" })),
  background: nullable(Schema.String.annotate({ description: "Deprecated: use reflect_mission" })),
  ...EntitySettingsUpdate,
  ...PipelineSettingsUpdate,
  dream: nullable(DreamSettingsUpdate.annotate({ description: "Dream and trance settings; merged key by key" })),
  retention: nullable(
    RetentionSettingsUpdate.annotate({ description: "Retention policy and recency decay; merged key by key" })
  )
}).annotate({ identifier: "BankUpdate" })
export type BankUpdate = typeof BankUpdate.Type

/** The settings a bank stores; `null` means "use the server default". */
export interface BankSettings {
  readonly name: string | null
  readonly reflectMission: string | null
  readonly retainMission: string | null
  readonly retainExtractionMode: ExtractionMode | null
  readonly retainCustomInstructions: string | null
  readonly retainChunkSize: number | null
  readonly bankPreset: string | null
  readonly enableObservations: boolean | null
  readonly observationsMission: string | null
  readonly disposition: DispositionTraits
  /** Entity trajectory and entity intelligence settings the bank overrides. */
  readonly entitySettings: EntitySettingsOverrides
  /** Dream and trance settings the bank sets itself (src/dreams/DreamConfig.ts). */
  readonly dreamSettings: DreamOverrides
  /** Recall strategies, reranking, automatic consolidation, recall defaults and memory defense (PipelineSettings.ts). */
  readonly pipelineSettings: PipelineOverrides
  /** Maximum ages, maximum count and recency half-life (src/domain/Retention.ts). */
  readonly retentionSettings: RetentionSettings
}

export interface Bank extends BankSettings {
  readonly bankId: string
  /** When a fact or document was last stored in the bank; null while it holds none. */
  readonly lastWriteAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

const Timestamp = Schema.NullOr(Schema.String)

export const BankResponse = Schema.Struct({
  bank_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  disposition: DispositionTraits,
  mission: Schema.NullOr(Schema.String),
  background: Schema.NullOr(Schema.String),
  reflect_mission: Schema.NullOr(Schema.String),
  retain_mission: Schema.NullOr(Schema.String),
  retain_extraction_mode: ExtractionMode,
  retain_custom_instructions: Schema.NullOr(Schema.String),
  retain_chunk_size: Schema.Int,
  bank_preset: Schema.NullOr(Schema.String),
  enable_observations: Schema.Boolean,
  observations_mission: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "BankResponse" })

export const BankListItem = Schema.Struct({
  bank_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  disposition: DispositionTraits,
  mission: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp,
  last_write_at: Timestamp.annotate({ description: "when a fact or document was last stored in the bank" })
}).annotate({ identifier: "BankListItem" })

export const BankListResponse = Schema.Struct({ banks: Schema.Array(BankListItem) })

export const BankProfileResponse = Schema.Struct({
  bank_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  disposition: DispositionTraits,
  mission: Schema.NullOr(Schema.String),
  background: Schema.NullOr(Schema.String).annotate({ description: "Deprecated: same as mission" })
}).annotate({ identifier: "BankProfileResponse" })

export const ProfileUpdate = Schema.Struct({
  disposition: DispositionTraits
}).annotate({ identifier: "ProfileUpdate" })

const Counts = Schema.Record(Schema.String, Schema.Int)

export const BankStatsResponse = Schema.Struct({
  bank_id: Schema.String,
  total_nodes: Schema.Int,
  total_links: Schema.Int,
  total_documents: Schema.Int,
  nodes_by_fact_type: Counts,
  links_by_link_type: Counts,
  links_by_fact_type: Counts,
  links_breakdown: Schema.Record(Schema.String, Counts),
  pending_operations: Schema.Int,
  failed_operations: Schema.Int,
  last_consolidated_at: Timestamp,
  pending_consolidation: Schema.Int,
  total_observations: Schema.Int,
  last_write_at: Timestamp.annotate({ description: "when a fact or document was last stored in the bank" }),
  last_memory_write_at: Timestamp.annotate({ description: "when a memory was last stored, edited or consolidated" })
}).annotate({ identifier: "BankStatsResponse" })
export type BankStatsResponse = typeof BankStatsResponse.Type

/** The configuration view: effective values (server defaults with the bank's overrides) and the overrides. */
export const BankConfigResponse = Schema.Struct({
  bank_id: Schema.String,
  config: Schema.Record(Schema.String, Schema.Unknown),
  overrides: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "BankConfigResponse" })

/** Existing clients wrap the fields in `updates`; plain bank fields are accepted too. */
export const BankConfigUpdate = Schema.Struct({
  updates: Schema.optionalKey(BankUpdate),
  ...BankUpdate.fields
}).annotate({ identifier: "BankConfigUpdate" })

export const DeleteResponse = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.NullOr(Schema.String),
  deleted_count: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "DeleteResponse" })
