/**
 * The dream run with a language model: one structured call on the reflect model with the evidence, answered as
 * JSON (repaired and validated by the Llm service). The answer is turned into the same draft the deterministic
 * generator produces; evidence ids the model cites that were not in its evidence are dropped. Any failure —
 * outage, timeout, an answer that cannot be repaired — is the caller's cue to fall back to the deterministic run.
 */
import { Effect, Schema } from "effect"
import type { LlmError, LlmUsage } from "../models/Llm.ts"
import { Llm } from "../models/Llm.ts"
import type { DreamSettings } from "./DreamConfig.ts"
import type { DreamEvidence } from "./DreamEvidence.ts"
import type { DreamDraft } from "./DreamResult.ts"
import { clamp01, round3 } from "./DreamResult.ts"

const Text = Schema.String.check(Schema.isMaxLength(2000))
const Texts = Schema.Array(Text).check(Schema.isMaxLength(12))
const score = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
const many = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.Array(schema).check(Schema.isMaxLength(12)))

export const DreamLlmOutput = Schema.Struct({
  summary: Text,
  hypotheses: Schema.optionalKey(Texts),
  predicted_next_events: many(Schema.Struct({
    title: Text,
    description: Text,
    target_ref: Schema.optionalKey(Schema.NullOr(Text)),
    target_kind: Schema.optionalKey(Schema.Literals(["entity", "topic", "bank", "theme", "memory"])),
    horizon: Schema.Literals(["near_term", "mid_term", "long_term"]),
    confidence: score,
    success_criteria: Texts,
    expiration_window_days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 365 }))),
    supporting_evidence_ids: Schema.optionalKey(Schema.Array(Schema.String))
  })),
  predicted_state_changes: Schema.optionalKey(Texts),
  growth_hypotheses: many(Schema.Struct({
    title: Text,
    description: Text,
    confidence: score,
    signals: Schema.optionalKey(Texts),
    blind_spot: Schema.optionalKey(Schema.NullOr(Text)),
    opportunity: Schema.optionalKey(Schema.NullOr(Text))
  })),
  risks: Schema.optionalKey(Texts),
  opportunities: Schema.optionalKey(Texts),
  recommended_validations: Schema.optionalKey(Texts),
  promotion_proposals: many(Schema.Struct({
    proposal_type: Schema.Literals(["observation", "mental_model", "prediction_candidate", "growth_candidate"]),
    title: Text,
    content: Text,
    confidence: score,
    tags: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMaxLength(64))).check(Schema.isMaxLength(8))),
    supporting_evidence_ids: Schema.optionalKey(Schema.Array(Schema.String)),
    rationale: Schema.optionalKey(Schema.NullOr(Text))
  })),
  narrative: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(8000)))
})
export type DreamLlmOutput = typeof DreamLlmOutput.Type

const systemPrompt = [
  "You look ahead for a memory bank: from the evidence given, and only from it, say what seems settled, what is",
  "likely to happen next and how you would check it. Stay concrete and factual; no fiction. Where the evidence is",
  "thin, say so and keep confidence low. Every prediction must be falsifiable: give success criteria a later memory",
  "could meet, and a window in days after which it should be checked. Cite evidence by the ids shown in brackets.",
  "Answer with one JSON object only."
].join("\n")

const userPrompt = (evidence: DreamEvidence, settings: DreamSettings) => {
  const lines = [
    settings.worker_prompt,
    "Return: summary, hypotheses, predicted_next_events, predicted_state_changes, growth_hypotheses, risks,",
    "opportunities, recommended_validations, promotion_proposals (observation | mental_model | prediction_candidate |",
    "growth_candidate) and a short narrative.",
    `Value focus weights: money ${settings.value_focus.money}, time ${settings.value_focus.time}, happiness ${settings.value_focus.happiness}.`,
    `Experience mode: ${settings.dream_experience}. Tone: ${settings.language_tone}.`,
    ...(settings.enforce_layman ? ["Use plain words a non-specialist understands."] : []),
    `Prediction horizons allowed: ${settings.prediction_horizon}. Promotion gate: ${settings.promotion_gate}.`,
    `Bank maturity: ${evidence.maturity} (${evidence.maturityReason})`,
    `Validation history: confirmation rate ${evidence.history.validationRate.toFixed(2)}, calibration ${
      evidence.history.calibration.toFixed(2)
    }, unresolved predictions ${evidence.history.unresolved}.`,
    `Recurring entities: ${
      evidence.recurringEntities.map(([name, count]) => `${name} (${count})`).join(", ") || "none"
    }.`,
    `Recurring themes: ${evidence.recurringThemes.map(([name, count]) => `${name} (${count})`).join(", ") || "none"}.`,
    `Contradictions: ${evidence.contradictions.map((c) => c.summary).join(" | ") || "none"}.`,
    `Graph signals: ${evidence.graph.map((g) => `${g.title}: ${g.reason}`).join(" | ") || "none"}.`,
    `Recency: ${JSON.stringify(evidence.recency)}`,
    "Evidence:",
    ...evidence.items.map((item) => `- [${item.id}] (${item.type}) ${item.text}`)
  ]
  return lines.join("\n")
}

const checkTermsOf = (targetRef: string | null | undefined, title: string): Array<string> => {
  if (targetRef !== null && targetRef !== undefined && targetRef.trim() !== "") return [targetRef.trim().toLowerCase()]
  // Without a target, the title's two longest content words stand for it.
  return [...new Set(title.toLowerCase().match(/[a-z][a-z'-]{4,}/g) ?? [])].sort((a, b) => b.length - a.length).slice(
    0,
    2
  )
}

export const toDraft = (output: DreamLlmOutput, evidence: DreamEvidence): DreamDraft => {
  const known = new Set(evidence.items.map((item) => item.id))
  const cited = (ids: ReadonlyArray<string> | undefined) => (ids ?? []).filter((id) => known.has(id))
  return {
    summary: output.summary,
    hypotheses: output.hypotheses ?? [],
    predictions: (output.predicted_next_events ?? []).map((p) => ({
      title: p.title,
      description: p.description,
      target_ref: p.target_ref ?? null,
      target_kind: p.target_kind ?? "topic",
      horizon: p.horizon,
      confidence: round3(clamp01(p.confidence)),
      success_criteria: p.success_criteria,
      expiration_window_days: p.expiration_window_days ?? 14,
      supporting_evidence_ids: cited(p.supporting_evidence_ids),
      check_terms: checkTermsOf(p.target_ref, p.title)
    })),
    state_changes: output.predicted_state_changes ?? [],
    growth: (output.growth_hypotheses ?? []).map((g) => ({
      title: g.title,
      description: g.description,
      confidence: round3(clamp01(g.confidence)),
      signals: g.signals ?? [],
      blind_spot: g.blind_spot ?? null,
      opportunity: g.opportunity ?? null
    })),
    risks: output.risks ?? [],
    opportunities: output.opportunities ?? [],
    validations: output.recommended_validations ?? [],
    proposals: (output.promotion_proposals ?? []).map((p) => ({
      proposal_type: p.proposal_type,
      title: p.title,
      content: p.content,
      confidence: round3(clamp01(p.confidence)),
      tags: p.tags ?? [],
      supporting_evidence_ids: cited(p.supporting_evidence_ids),
      rationale: p.rationale ?? null
    })),
    narrative: output.narrative ?? ""
  }
}

export const generateWithLlm = Effect.fn("Dreams.generateWithLlm")(function*(
  bankId: string,
  operationId: string,
  evidence: DreamEvidence,
  settings: DreamSettings
): Effect.fn.Return<{ readonly draft: DreamDraft; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    purpose: "reflect",
    scope: "dream",
    bankId,
    operationId,
    objectName: "dream_foresight",
    schema: DreamLlmOutput,
    maxOutputTokens: settings.max_output_tokens,
    temperature: 0.3,
    messages: [{ role: "system", content: systemPrompt }, { role: "user", content: userPrompt(evidence, settings) }]
  })
  return { draft: toDraft(value, evidence), usage }
})
