/**
 * The structured result of a dream run, whichever generator produced it (the language model or the deterministic
 * generator), and the deterministic post-processing every result goes through: horizon policy, prediction slots,
 * novelty, confidence, quality and the final status. Pure; no I/O.
 */
import type { DreamSettings } from "./DreamConfig.ts"
import type { DreamEvidence } from "./DreamEvidence.ts"

export type Horizon = "near_term" | "mid_term" | "long_term"
export type TargetKind = "entity" | "topic" | "bank" | "theme" | "memory"

export interface PredictionDraft {
  readonly title: string
  readonly description: string
  readonly target_ref: string | null
  readonly target_kind: TargetKind
  readonly horizon: Horizon
  readonly confidence: number
  readonly success_criteria: ReadonlyArray<string>
  readonly expiration_window_days: number
  readonly supporting_evidence_ids: ReadonlyArray<string>
  /** Words a memory retained later must contain for the automatic check to count the prediction as supported. */
  readonly check_terms: ReadonlyArray<string>
}

export interface GrowthHypothesis {
  readonly title: string
  readonly description: string
  readonly confidence: number
  readonly signals: ReadonlyArray<string>
  readonly blind_spot: string | null
  readonly opportunity: string | null
}

export type ProposalType = "observation" | "mental_model" | "prediction_candidate" | "growth_candidate"

export interface ProposalDraft {
  readonly proposal_type: ProposalType
  readonly title: string
  readonly content: string
  readonly confidence: number
  readonly tags: ReadonlyArray<string>
  readonly supporting_evidence_ids: ReadonlyArray<string>
  readonly rationale: string | null
}

export interface DreamDraft {
  readonly summary: string
  readonly hypotheses: ReadonlyArray<string>
  readonly predictions: ReadonlyArray<PredictionDraft>
  readonly state_changes: ReadonlyArray<string>
  readonly growth: ReadonlyArray<GrowthHypothesis>
  readonly risks: ReadonlyArray<string>
  readonly opportunities: ReadonlyArray<string>
  readonly validations: ReadonlyArray<string>
  readonly proposals: ReadonlyArray<ProposalDraft>
  /** Free text the generator wrote about the run; used only for the quality score, never shown as HTML. */
  readonly narrative: string
}

export type DreamStatus = "success" | "low_signal" | "duplicate_low_novelty" | "failed_validation" | "failed_llm"

export interface Confidence {
  readonly overall: number
  readonly calibration_score: number
  readonly evidence_richness: number
  readonly contradiction_pressure: number
  readonly prediction_specificity: number
  readonly novelty_score: number
  readonly per_claim: ReadonlyArray<{ readonly claim: string; readonly confidence: number; readonly basis: string }>
}

export interface ScoredDream {
  readonly draft: DreamDraft
  readonly status: DreamStatus
  readonly novelty: number
  readonly quality: number
  readonly confidence: Confidence
}

export const clamp01 = (value: number) => Math.min(1, Math.max(0, Number.isFinite(value) ? value : 0))
export const round3 = (value: number) => Number(value.toFixed(3))

const summaryTokens = (text: string) =>
  new Set((text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => t.length > 2))

/** 1 − the highest Jaccard similarity of this summary to a recent one; 1 with no history, 0 for an empty summary. */
export const noveltyOf = (summary: string, recent: ReadonlyArray<string>): number => {
  const mine = summaryTokens(summary)
  if (mine.size === 0) return 0
  let highest = 0
  for (const other of recent) {
    const theirs = summaryTokens(other)
    const union = new Set([...mine, ...theirs]).size
    const shared = [...mine].filter((token) => theirs.has(token)).length
    highest = Math.max(highest, union === 0 ? 0 : shared / union)
  }
  return round3(1 - highest)
}

export const confidenceOf = (
  draft: DreamDraft,
  evidenceCount: number,
  contradictions: number,
  calibration: number,
  novelty: number
): Confidence => {
  const richness = clamp01(Math.log(1 + evidenceCount) / Math.log(12))
  const pressure = clamp01(contradictions / Math.max(evidenceCount, 1))
  const specific = draft.predictions.filter((p) => p.success_criteria.length > 0 && p.description.trim() !== "").length
  const specificity = draft.predictions.length === 0 ? 0.2 : specific / draft.predictions.length
  const overall = clamp01(0.32 * richness + 0.24 * calibration + 0.18 * novelty + 0.2 * specificity - 0.18 * pressure)
  return {
    overall: round3(overall),
    calibration_score: round3(calibration),
    evidence_richness: round3(richness),
    contradiction_pressure: round3(pressure),
    prediction_specificity: round3(specificity),
    novelty_score: round3(novelty),
    per_claim: [
      { claim: draft.summary.slice(0, 180), confidence: round3(overall), basis: "bank evidence + history" },
      ...draft.predictions.slice(0, 4).map((p) => ({
        claim: p.title,
        confidence: round3(p.confidence),
        basis: "prediction criteria + recalled evidence"
      }))
    ]
  }
}

const qualityWords = ["prediction", "because", "validation", "risk", "opportunity", "growth", "next", "confidence"]

/** Length, coverage of the foresight vocabulary, density and how well the run was anchored in evidence. */
export const textQuality = (text: string, topK: number): number => {
  const words = text.split(/\s+/).filter((word) => word !== "").length
  const lowered = text.toLowerCase()
  const hits = qualityWords.filter((word) => lowered.includes(word)).length
  const density = words <= 360 ? 1 : Math.max(0.2, 360 / words)
  const anchor = topK >= 3 ? 1 : 0.7
  return 0.3 * Math.min(words / 160, 1) + 0.3 * Math.min(hits / 5, 1) + 0.25 * density + 0.15 * anchor
}

const horizonAllowed = (policy: DreamSettings["prediction_horizon"], horizon: Horizon) =>
  policy === "mixed" || (policy === "near" ? horizon === "near_term" : horizon !== "near_term")

const backlogValidation = "Resolve or review the dream predictions still waiting before new ones are added."

/** Applies the horizon policy and the free prediction slots, then scores and classifies the run. */
export const scoreDream = (
  raw: DreamDraft,
  evidence: DreamEvidence,
  settings: DreamSettings,
  qualityText: string
): ScoredDream => {
  const backlog = evidence.history.unresolved
  const slots = Math.max(settings.max_pending_predictions - backlog, 0)
  const predictions = raw.predictions.filter((p) => horizonAllowed(settings.prediction_horizon, p.horizon)).slice(
    0,
    slots
  )
  const validations = backlog >= settings.max_pending_predictions && !raw.validations.includes(backlogValidation)
    ? [...raw.validations, backlogValidation]
    : raw.validations
  const draft: DreamDraft = { ...raw, predictions, validations }
  const novelty = noveltyOf(draft.summary, evidence.history.recentSummaries)
  const confidence = confidenceOf(
    draft,
    evidence.items.length,
    evidence.contradictions.length,
    evidence.history.calibration,
    novelty
  )
  const quality = round3(Math.max(textQuality(qualityText, settings.top_k), confidence.overall))
  if (quality < settings.quality_threshold) {
    return {
      draft: {
        ...draft,
        proposals: [],
        validations: [
          ...draft.validations,
          `Raise the dream quality above ${settings.quality_threshold.toFixed(2)} before promoting any proposal.`
        ]
      },
      status: "failed_validation",
      novelty,
      quality,
      confidence
    }
  }
  return {
    draft,
    status: novelty < settings.novelty_threshold ? "duplicate_low_novelty" : "success",
    novelty,
    quality,
    confidence
  }
}
