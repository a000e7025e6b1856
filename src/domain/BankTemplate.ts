/**
 * Bank templates as clients send and receive them: a versioned manifest of a bank's configuration overrides, its
 * directives (matched by name on import) and its mental models (matched by id), and what an import did. The field
 * names follow the published Hindsight client, so a template moves between engram and Hindsight; only decoding
 * rules live here (the import's cross-item checks are in `bank/TemplateRules`).
 */
import { Schema } from "effect"
import { BankUpdate } from "./Bank.ts"
import { MentalModelId, MentalModelMaxTokens, MentalModelTriggerInput } from "./MentalModel.ts"

/** The manifest format this server writes and reads. */
export const templateVersion = "1"

const NonBlank = Schema.String.check(
  Schema.makeFilter((value: string) => value.trim() !== "" || "must not be empty")
)
const Tags = Schema.Array(Schema.String)

/**
 * The bank's settings as `PUT {bank}` takes them, plus any other key: Hindsight's per-bank settings that engram
 * does not have are accepted and ignored (a template exported by Hindsight imports), any other key is refused by
 * the import's rules so that a misspelt setting is never silently dropped.
 */
export const TemplateBankConfig = Schema.StructWithRest(Schema.Struct(BankUpdate.fields), [
  Schema.Record(Schema.String, Schema.Unknown)
]).annotate({
  identifier: "BankTemplateConfig",
  description:
    "Per-bank setting overrides (the fields of PUT /v1/default/banks/{bank_id}); omitted fields stay unchanged"
})
export type TemplateBankConfig = typeof TemplateBankConfig.Type

export const TemplateMentalModel = Schema.Struct({
  id: MentalModelId,
  name: NonBlank,
  source_query: NonBlank,
  tags: Schema.optionalKey(Tags),
  max_tokens: Schema.optionalKey(MentalModelMaxTokens),
  trigger: Schema.optionalKey(MentalModelTriggerInput)
}).annotate({ identifier: "BankTemplateMentalModel" })
export type TemplateMentalModel = typeof TemplateMentalModel.Type

export const TemplateDirective = Schema.Struct({
  name: NonBlank.annotate({ description: "the match key on re-import" }),
  content: NonBlank,
  // Stored in an `integer` column: a larger value must be a 400, not a database error.
  priority: Schema.optionalKey(Schema.Int.check(Schema.isInt32())),
  is_active: Schema.optionalKey(Schema.Boolean),
  tags: Schema.optionalKey(Tags)
}).annotate({ identifier: "BankTemplateDirective" })
export type TemplateDirective = typeof TemplateDirective.Type

export const BankTemplateManifest = Schema.Struct({
  version: Schema.Literal(templateVersion).annotate({
    description: `manifest format version (currently '${templateVersion}')`
  }),
  bank: Schema.optionalKey(Schema.NullOr(TemplateBankConfig)),
  mental_models: Schema.optionalKey(
    Schema.NullOr(Schema.Array(TemplateMentalModel)).annotate({
      description: "created or updated by id; omitted: the bank's models stay as they are"
    })
  ),
  directives: Schema.optionalKey(
    Schema.NullOr(Schema.Array(TemplateDirective)).annotate({
      description: "created or updated by name; omitted: the bank's directives stay as they are"
    })
  )
}).annotate({ identifier: "BankTemplateManifest" })
export type BankTemplateManifest = typeof BankTemplateManifest.Type

export const BankTemplateImportResponse = Schema.Struct({
  bank_id: Schema.String,
  config_applied: Schema.Boolean,
  mental_models_created: Schema.Array(Schema.String),
  mental_models_updated: Schema.Array(Schema.String),
  directives_created: Schema.Array(Schema.String),
  directives_updated: Schema.Array(Schema.String),
  operation_ids: Schema.Array(Schema.String).annotate({
    description: "refresh operations generating the content of created models and of models whose query changed"
  }),
  dry_run: Schema.Boolean
}).annotate({ identifier: "BankTemplateImportResponse" })
export type BankTemplateImportResponse = typeof BankTemplateImportResponse.Type

/**
 * Hindsight 0.9's per-bank template settings. Those engram does not have are accepted and ignored on import;
 * those it has are validated by `BankUpdate`'s rules.
 */
export const hindsightTemplateSettings: ReadonlySet<string> = new Set([
  "reflect_mission",
  "retain_mission",
  "retain_extraction_mode",
  "retain_custom_instructions",
  "retain_chunk_size",
  "retain_structured_chunk_size",
  "enable_observations",
  "observations_mission",
  "enable_temporal_retrieval",
  "enable_graph_retrieval",
  "enable_reranking",
  "disposition_skepticism",
  "disposition_literalism",
  "disposition_empathy",
  "entity_labels",
  "entities_allow_free_form",
  "retain_default_strategy",
  "retain_strategies",
  "retain_chunk_batch_size",
  "mcp_enabled_tools",
  "consolidation_llm_batch_size",
  "consolidation_source_facts_max_tokens",
  "consolidation_source_facts_max_tokens_per_observation",
  "max_observations_per_scope",
  "observation_scope_limits",
  "reflect_source_facts_max_tokens",
  "llm_gemini_safety_settings",
  "recall_budget_function",
  "recall_budget_fixed_low",
  "recall_budget_fixed_mid",
  "recall_budget_fixed_high",
  "recall_budget_adaptive_low",
  "recall_budget_adaptive_mid",
  "recall_budget_adaptive_high",
  "recall_budget_min",
  "recall_budget_max",
  "audit_log_enabled",
  "store_document_text",
  "enable_auto_consolidation",
  "consolidation_max_memories_per_round",
  "consolidation_llm_parallelism",
  "recall_include_chunks",
  "recall_max_tokens",
  "recall_chunks_max_tokens",
  "memory_defense"
])
