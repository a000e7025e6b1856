/**
 * The dream run without a language model (none configured, or its answer unusable): foresight read straight from
 * the evidence — the recurring subjects and themes, what changed recently, open contradictions and stale topics —
 * with predictions of the form "X will come up again within N days" that the expiry check can verify later.
 * Every sentence names where it came from; nothing is invented.
 */
import type { DreamSettings } from "./DreamConfig.ts"
import type { DreamEvidence, EvidenceItem } from "./DreamEvidence.ts"
import type { DreamDraft, GrowthHypothesis, Horizon, PredictionDraft, ProposalDraft } from "./DreamResult.ts"
import { round3 } from "./DreamResult.ts"

const dayMillis = 86_400_000

/** The window a recurrence prediction is given, from the bank's horizon policy. */
const windowFor = (policy: DreamSettings["prediction_horizon"]): { days: number; horizon: Horizon } =>
  policy === "near" ? { days: 7, horizon: "near_term" } : policy === "far" ? { days: 30, horizon: "mid_term" } : {
    days: 14,
    horizon: "near_term"
  }

const mentions = (items: ReadonlyArray<EvidenceItem>, subject: string) => {
  const lowered = subject.toLowerCase()
  return items.filter((item) =>
    item.entities.some((entity) => entity.toLowerCase() === lowered) || item.text.toLowerCase().includes(lowered)
  )
}

const list = (names: ReadonlyArray<string>) =>
  names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

const shortText = (text: string, length = 140) => (text.length <= length ? text : `${text.slice(0, length - 1)}…`)

export const lowSignalSummary = "The bank does not yet hold enough stable evidence for a trustworthy foresight run."

export const deterministicDream = (evidence: DreamEvidence, settings: DreamSettings): DreamDraft => {
  const facts = evidence.items.filter((item) => item.type !== "mental_model")
  const n = facts.length
  const { days, horizon } = windowFor(settings.prediction_horizon)
  const subjects: Array<{ name: string; kind: "entity" | "theme"; count: number }> = [
    ...evidence.recurringEntities.map(([name, count]) => ({ name, kind: "entity" as const, count })),
    ...evidence.recurringThemes.map(([name, count]) => ({ name, kind: "theme" as const, count }))
  ]
  const seen = new Set<string>()
  // Only what recurs (two memories or more) is a subject worth a forecast.
  const top = subjects.filter((subject) => subject.count >= 2).filter((subject) => {
    const key = subject.name.toLowerCase()
    if (seen.has(key)) return false
    seen.add(key)
    return true
  }).slice(0, 3)

  // "Recent" is measured from the newest evidence, so a bank about the past still has a latest chapter.
  const dated = facts.filter((item) => item.at !== null)
  const newest = dated.reduce((max, item) => Math.max(max, item.at!), Number.NEGATIVE_INFINITY)
  const recent = dated.filter((item) => newest - item.at! <= 7 * dayMillis)
  const latest = dated.find((item) => item.at === newest)
  const changed = evidence.graph.filter((signal) => signal.status === "changed")
  const stale = evidence.graph.filter((signal) => signal.status === "stale")

  const parts: Array<string> = []
  parts.push(
    n === 0
      ? lowSignalSummary
      : top.length > 0
      ? `Across ${n} recalled memories the recurring subjects are ${list(top.map((s) => `${s.name} (${s.count})`))}.`
      : `The ${n} recalled memories share no recurring subject yet.`
  )
  if (latest !== undefined) {
    parts.push(
      `${recent.length} of them fall in the latest week of evidence (up to ${
        new Date(newest).toISOString().slice(0, 10)
      }); the newest says: "${shortText(latest.text, 120)}"`
    )
  }
  if (changed.length > 0) parts.push(`Recently changed: ${list(changed.slice(0, 2).map((s) => s.title))}.`)
  if (evidence.contradictions.length > 0) {
    parts.push(`${evidence.contradictions.length} contradiction(s) are still open.`)
  }
  if (stale.length > 0) parts.push(`Gone quiet: ${list(stale.slice(0, 2).map((s) => s.title))}.`)

  const predictions: Array<PredictionDraft> = top.map((subject) => {
    const support = mentions(facts, subject.name)
    const share = n === 0 ? 0 : subject.count / n
    return {
      title: `${subject.name} will come up again within ${days} days`,
      description: `${subject.name} appears in ${subject.count} of the ${n} recalled memories, because it keeps ` +
        `recurring it is likely to be mentioned again in the next ${days} days.`,
      target_ref: subject.name,
      target_kind: subject.kind,
      horizon,
      confidence: round3(Math.min(0.9, 0.35 + 0.5 * share)),
      success_criteria: [`A memory mentioning "${subject.name}" is retained within ${days} days of this run.`],
      expiration_window_days: days,
      supporting_evidence_ids: support.map((item) => item.id),
      check_terms: [subject.name.toLowerCase()]
    }
  })

  const hypotheses = [
    ...top.map((s) => `${s.name} is a steady subject of this bank (${s.count} of ${n} recalled memories).`),
    ...changed.slice(0, 2).map((s) => `${s.title} is in flux: ${s.reason}`)
  ]
  const growth: Array<GrowthHypothesis> = evidence.recurringThemes.slice(0, 2).map(([theme, count]) => ({
    title: `Growing theme: ${theme}`,
    description: `"${theme}" recurs in ${count} recalled memories; more of the bank's evidence may gather around it.`,
    confidence: round3(Math.min(0.8, 0.3 + count / Math.max(n, 1) / 2)),
    signals: mentions(facts, theme).map((item) => item.id).slice(0, 4),
    blind_spot: null,
    opportunity: null
  }))
  const risks = [
    ...evidence.contradictions.slice(0, 2).map((c) => `Open contradiction: ${shortText(c.summary)}`),
    ...(n < settings.min_recall_results ? ["Low evidence density can make any conclusion misleading."] : [])
  ]
  const opportunities = stale.slice(0, 2).map((s) => `Revisit ${s.title}: ${s.reason}`)
  const validations = [
    ...predictions.map((p) => `Check whether ${p.target_ref} comes up again within ${p.expiration_window_days} days.`),
    ...evidence.contradictions.slice(0, 1).map((c) => `Settle which side is true: ${shortText(c.summary, 100)}`),
    ...(n < settings.min_recall_results
      ? [
        "Capture one or two more concrete memories about the same person or topic.",
        "Run dreams again after the next consolidation."
      ]
      : [])
  ]

  const proposals: Array<ProposalDraft> = top.slice(0, 2).map((subject) => {
    const support = mentions(facts, subject.name).slice(0, 3)
    return {
      proposal_type: "observation",
      title: `${subject.name} recurs in this bank`,
      content: `${subject.name} is a recurring subject: ${support.map((item) => shortText(item.text, 160)).join(" ")}`,
      confidence: round3(Math.min(0.85, 0.4 + subject.count / Math.max(n, 1) / 2)),
      tags: ["dream"],
      supporting_evidence_ids: support.map((item) => item.id),
      rationale: `Seen in ${subject.count} of ${n} recalled memories.`
    }
  })
  const leading = top[0]
  if (leading !== undefined && leading.count >= 3) {
    proposals.push({
      proposal_type: "mental_model",
      title: `${leading.name}`,
      content: `What this bank knows about ${leading.name}`,
      confidence: round3(Math.min(0.85, 0.4 + leading.count / Math.max(n, 1) / 2)),
      tags: ["dream"],
      supporting_evidence_ids: mentions(facts, leading.name).map((item) => item.id),
      rationale: `${leading.name} recurs often enough to deserve a maintained summary.`
    })
  }

  const narrative = [
    parts.join(" "),
    ...predictions.map((p) => `Prediction: ${p.description} Validation: ${p.success_criteria[0]}`),
    ...growth.map((g) => `Growth: ${g.description}`),
    ...risks.map((r) => `Risk: ${r}`),
    ...opportunities.map((o) => `Opportunity: ${o}`),
    `Next: ${validations[0] ?? "retain more evidence"}. Confidence rests on ${n} recalled memories.`
  ].join("\n")

  return {
    summary: parts.join(" "),
    hypotheses,
    predictions,
    state_changes: changed.map((s) => `${s.title}: ${s.reason}`),
    growth,
    risks,
    opportunities,
    validations,
    proposals,
    narrative
  }
}
