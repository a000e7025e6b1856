/**
 * The bank's dream settings: defaults, the four presets, and how they combine. The bank's own values, its preset
 * and the defaults merge field by field (and `value_focus` key by key), so a preset's values are never beaten by a
 * default the bank did not set (the reference's shallow merge let them). Pure; validation is the schema's job.
 */
import type { DreamPreset, DreamSettingsUpdate } from "../domain/Dream.ts"

export interface ValueFocus {
  readonly money: number
  readonly time: number
  readonly happiness: number
}

export interface DreamSettings {
  readonly enabled: boolean
  readonly trance_enabled: boolean
  readonly trigger_mode: "event" | "cron" | "hybrid"
  readonly cron_interval_minutes: number
  readonly cooldown_minutes: number
  readonly top_k: number
  readonly max_input_tokens: number
  readonly max_output_tokens: number
  readonly model_preference: string
  readonly dream_experience: "hybrid" | "structured" | "narrative"
  readonly prediction_horizon: "near" | "mixed" | "far"
  readonly auto_write_posture: string
  readonly promotion_gate: string
  readonly worker_prompt: string
  readonly write_distilled_summary: boolean
  readonly distillation_mode: "off" | "summary" | "fragments"
  readonly distillation_max_fragments: number
  readonly quality_threshold: number
  readonly min_recall_results: number
  readonly novelty_threshold: number
  readonly validation_lookback_days: number
  readonly max_pending_predictions: number
  readonly max_artifact_bytes: number
  readonly language_tone: string
  readonly enforce_layman: boolean
  readonly value_focus: ValueFocus
  readonly prompt_template_version: string
  readonly preset: DreamPreset
}

/** What a bank sets itself: any subset, stored as is in `banks.dream_settings`. */
export type DreamOverrides = Partial<Omit<DreamSettings, "value_focus">> & {
  readonly value_focus?: Partial<ValueFocus>
}

export const dreamDefaults: DreamSettings = {
  enabled: false,
  trance_enabled: false,
  trigger_mode: "hybrid",
  cron_interval_minutes: 180,
  cooldown_minutes: 60,
  top_k: 4,
  max_input_tokens: 900,
  max_output_tokens: 500,
  model_preference: "local-first",
  dream_experience: "hybrid",
  prediction_horizon: "mixed",
  auto_write_posture: "aggressive_proposals",
  promotion_gate: "human_review",
  worker_prompt: "Look ahead from what this bank actually holds: say what looks settled, what is likely to change " +
    "next, which growth path is taking shape, and which checks would raise confidence.",
  write_distilled_summary: false,
  distillation_mode: "off",
  distillation_max_fragments: 3,
  quality_threshold: 0.65,
  min_recall_results: 2,
  novelty_threshold: 0.58,
  validation_lookback_days: 45,
  max_pending_predictions: 24,
  max_artifact_bytes: 24000,
  language_tone: "plain-layman",
  enforce_layman: true,
  value_focus: { money: 1, time: 1, happiness: 1 },
  prompt_template_version: "v3-evidence-foresight",
  preset: "balanced_org"
}

const preset = (
  topK: number,
  minRecall: number,
  maxIn: number,
  maxOut: number,
  cooldown: number,
  quality: number,
  novelty: number,
  lookback: number,
  focus: ValueFocus,
  extra: DreamOverrides = {}
): DreamOverrides => ({
  top_k: topK,
  min_recall_results: minRecall,
  max_input_tokens: maxIn,
  max_output_tokens: maxOut,
  cooldown_minutes: cooldown,
  quality_threshold: quality,
  novelty_threshold: novelty,
  validation_lookback_days: lookback,
  value_focus: focus,
  ...extra
})

export const dreamPresets: Readonly<Record<DreamPreset, DreamOverrides>> = {
  balanced_org: preset(4, 2, 900, 520, 60, 0.66, 0.58, 45, { money: 1, time: 1, happiness: 1 }),
  lean_local: preset(3, 2, 640, 420, 90, 0.7, 0.64, 30, { money: 0.8, time: 1.4, happiness: 0.8 }, {
    enforce_layman: true
  }),
  risk_guard: preset(5, 3, 1100, 480, 120, 0.78, 0.66, 60, { money: 0.9, time: 0.9, happiness: 1.2 }, {
    enforce_layman: true
  }),
  exec_strategy: preset(4, 2, 1000, 440, 45, 0.68, 0.6, 45, { money: 1.5, time: 1.2, happiness: 0.7 }, {
    language_tone: "executive-plain"
  })
}

/** `null` and absent leave a value unchanged; `value_focus` merges key by key. */
export const applyDreamUpdate = (
  current: DreamOverrides,
  update: DreamSettingsUpdate | null | undefined
): DreamOverrides => {
  if (update === null || update === undefined) return current
  const next: Record<string, unknown> = { ...current }
  for (const [key, value] of Object.entries(update)) {
    if (value === null || value === undefined) continue
    if (key === "value_focus") {
      const focus: Record<string, number> = { ...current.value_focus }
      for (const [name, weight] of Object.entries(value as Record<string, number | null | undefined>)) {
        if (typeof weight === "number") focus[name] = weight
      }
      next[key] = focus
    } else {
      next[key] = value
    }
  }
  return next as DreamOverrides
}

/** Reads the stored column leniently: keys this version does not know, or values of the wrong type, are dropped. */
export const decodeDreamOverrides = (stored: unknown): DreamOverrides => {
  if (typeof stored !== "object" || stored === null) return {}
  const record = stored as Record<string, unknown>
  const kept: Record<string, unknown> = {}
  for (const [key, fallback] of Object.entries(dreamDefaults)) {
    const value = record[key]
    if (key === "value_focus" && typeof value === "object" && value !== null) {
      kept[key] = Object.fromEntries(
        Object.entries(value).filter(([name, weight]) =>
          name in dreamDefaults.value_focus && typeof weight === "number"
        )
      )
    } else if (value !== undefined && typeof value === typeof fallback) {
      kept[key] = value
    }
  }
  return kept as DreamOverrides
}

/** Defaults ← preset ← the bank's own values, field by field. */
export const effectiveDreamSettings = (overrides: DreamOverrides): DreamSettings => {
  const chosen = overrides.preset ?? dreamDefaults.preset
  const presetValues = dreamPresets[chosen] ?? {}
  const { value_focus: presetFocus, ...presetRest } = presetValues
  const { value_focus: ownFocus, ...ownRest } = overrides
  return {
    ...dreamDefaults,
    ...presetRest,
    ...ownRest,
    preset: chosen,
    value_focus: { ...dreamDefaults.value_focus, ...presetFocus, ...ownFocus }
  }
}
