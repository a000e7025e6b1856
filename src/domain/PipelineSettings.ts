/**
 * A bank's pipeline switches, as Hindsight 0.9 clients send them in the bank config: which recall strategies run
 * (graph, temporal) and whether results are reranked, whether retain consolidates automatically, what a recall
 * returns when the request does not say (token budget, chunks), and the memory-defense policy retain screens
 * content with. Every field is optional; absent means today's behaviour. Stored as one jsonb column of the
 * bank's overrides (like EntitySettings). Pure.
 */
import { Schema } from "effect"

const nullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

/** The detector retain runs; Hindsight's other detectors are its cloud's, so naming one is refused, not ignored. */
export const DefenseDetector = Schema.Literals(["sensitive_data"])
export const DefenseAction = Schema.Literals(["redact", "block", "allow"])
export type DefenseAction = typeof DefenseAction.Type

export const DefenseRule = Schema.Struct({
  on: DefenseDetector.annotate({
    description: "the detector: `sensitive_data` (credentials, keys, card and social security numbers)"
  }),
  action: DefenseAction.annotate({
    description: "`redact` stores [REDACTED:type] instead of the match; `block` drops the item; `allow` stores it as is"
  })
}).annotate({ identifier: "MemoryDefenseRule" })

export const MemoryDefensePolicy = Schema.Struct({
  enabled: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "screen retained content (default true once a policy is set)" })
  ),
  rules: Schema.optionalKey(Schema.Array(DefenseRule))
}).annotate({ identifier: "MemoryDefensePolicy" })
export type MemoryDefensePolicy = typeof MemoryDefensePolicy.Type

/** The fields `PUT/PATCH {bank}` and `PATCH {bank}/config` accept, merged into `BankUpdate`. */
export const PipelineSettingsUpdate = {
  enable_graph_retrieval: nullable(Schema.Boolean.annotate({
    description:
      "Run the graph strategy (spreading activation over entity, causal and temporal links) in recall (default true)"
  })),
  enable_temporal_retrieval: nullable(Schema.Boolean.annotate({
    description: "Read dates in the query and run the temporal strategy in recall (default true)"
  })),
  enable_reranking: nullable(Schema.Boolean.annotate({
    description: "Rerank fused recall candidates; false returns the fused order as it is (default true)"
  })),
  enable_auto_consolidation: nullable(Schema.Boolean.annotate({
    description: "Consolidate into observations automatically after retain and deletions; false leaves it to " +
      "POST {bank}/consolidate (default true)"
  })),
  recall_max_tokens: nullable(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })).annotate({
      description: "Token budget of a recall whose request gives no max_tokens (default 4096)"
    })
  ),
  recall_include_chunks: nullable(Schema.Boolean.annotate({
    description: "Include chunks in a recall whose request does not mention include.chunks (default false)"
  })),
  memory_defense: nullable(MemoryDefensePolicy.annotate({
    description:
      "Screen retained content for secrets: {enabled, rules: [{on: 'sensitive_data', action: 'redact'|'block'|'allow'}]}"
  }))
}

type UpdateFields = { readonly [K in keyof typeof PipelineSettingsUpdate]?: (typeof PipelineSettingsUpdate)[K]["Type"] }

export interface PipelineSettings {
  readonly enableGraphRetrieval: boolean
  readonly enableTemporalRetrieval: boolean
  readonly enableReranking: boolean
  readonly enableAutoConsolidation: boolean
  readonly recallMaxTokens: number
  readonly recallIncludeChunks: boolean
  readonly memoryDefense: MemoryDefensePolicy | null
}

/** What a bank sets itself; absent keys follow the defaults. Stored as is in `banks.pipeline_settings`. */
export type PipelineOverrides = Partial<PipelineSettings>

export const pipelineDefaults: PipelineSettings = {
  enableGraphRetrieval: true,
  enableTemporalRetrieval: true,
  enableReranking: true,
  enableAutoConsolidation: true,
  recallMaxTokens: 4096,
  recallIncludeChunks: false,
  memoryDefense: null
}

const fieldOf: Record<keyof PipelineSettings, keyof typeof PipelineSettingsUpdate> = {
  enableGraphRetrieval: "enable_graph_retrieval",
  enableTemporalRetrieval: "enable_temporal_retrieval",
  enableReranking: "enable_reranking",
  enableAutoConsolidation: "enable_auto_consolidation",
  recallMaxTokens: "recall_max_tokens",
  recallIncludeChunks: "recall_include_chunks",
  memoryDefense: "memory_defense"
}
const keys = Object.keys(fieldOf) as Array<keyof PipelineSettings>

/** `null` and absent leave a value unchanged, as for every other bank setting. */
export const applyPipelineUpdate = (current: PipelineOverrides, update: UpdateFields): PipelineOverrides => {
  const next: Record<string, unknown> = { ...current }
  for (const key of keys) {
    const value = update[fieldOf[key]]
    if (value !== undefined && value !== null) next[key] = value
  }
  return next as PipelineOverrides
}

const decodePolicy = Schema.decodeUnknownOption(MemoryDefensePolicy)

/** Reads the stored column leniently: unknown keys and values of the wrong type are dropped. */
export const decodePipelineOverrides = (stored: unknown): PipelineOverrides => {
  if (typeof stored !== "object" || stored === null) return {}
  const record = stored as Record<string, unknown>
  const kept: Record<string, unknown> = {}
  for (const key of keys) {
    const value = record[key]
    if (key === "memoryDefense") {
      const policy = decodePolicy(value)
      if (policy._tag === "Some") kept[key] = policy.value
    } else if (typeof value === typeof pipelineDefaults[key]) {
      kept[key] = value
    }
  }
  return kept as PipelineOverrides
}

export const effectivePipelineSettings = (overrides: PipelineOverrides): PipelineSettings => ({
  ...pipelineDefaults,
  ...overrides
})

/** The settings in the configuration view's snake_case: effective values, or only the bank's overrides. */
export const pipelineSettingsView = (overrides: PipelineOverrides, only: "effective" | "overrides") => {
  const source: Partial<PipelineSettings> = only === "effective" ? effectivePipelineSettings(overrides) : overrides
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [fieldOf[key], source[key]]))
}
