/**
 * The corrections applied for anomalies just detected. A contradiction severe enough, between two short
 * statements (see `contradictionPolicy.atomicMaxClauses`), supersedes the statement said earlier — its confidence lowered, the newer one recorded as its replacement — where the reference
 * lowered the new one (behaviour-reference §16.9). Causal-order and missing-step flaws get a repair suggestion.
 * Pure: it decides; `AnomalyStore` writes.
 */
import { clamp01, type Detected, round, saidBefore, type Statement } from "./Detected.ts"

export const correctionPolicy = {
  /** Contradictions from this severity on supersede the older statement (the reference's threshold). */
  supersedeSeverity: 0.7,
  /** Base share of confidence removed at full severity (reference: α = 0.35·(1 + 0.2·(severity − 0.5))). */
  alphaBase: 0.35
}

/** The reference's adaptive confidence: severity 0.8 takes a fully trusted statement from 1.0 to 0.703. */
export const loweredConfidence = (before: number, severity: number) => {
  const alpha = correctionPolicy.alphaBase * (1 + 0.2 * (severity - 0.5))
  return round(clamp01(before * (1 - severity * alpha)))
}

export interface PlannedCorrection {
  readonly correctionType: "confidence_adjustment" | "chain_repair_suggestion"
  readonly targetUnitId: string | null
  readonly beforeState: Record<string, unknown>
  readonly afterState: Record<string, unknown>
  readonly confidenceDelta: number | null
  /** For a supersession: the unit to update and its new confidence and replacement. */
  readonly supersede: { readonly unitId: string; readonly confidence: number; readonly by: string } | null
}

export interface Plan {
  readonly correction: PlannedCorrection | null
  readonly status: "open" | "acknowledged" | "resolved"
}

/**
 * `statements` holds both sides of each pair; `confidence` is the running confidence of units already lowered in
 * this batch, so two new statements contradicting the same old one lower it twice, from where the first left it.
 */
export const planCorrection = (
  anomaly: Detected,
  statements: ReadonlyMap<string, Statement>,
  confidence: Map<string, { value: number; supersededBy: string | null }>
): Plan => {
  const supersedes = anomaly.type === "contradiction" && anomaly.severity >= correctionPolicy.supersedeSeverity &&
    anomaly.metadata["atomic_statements"] === true
  if (supersedes) {
    const [a, b] = anomaly.unitIds.map((id) => statements.get(id))
    if (a === undefined || b === undefined) return { correction: null, status: "open" }
    const [older, newer] = saidBefore(a, b) ? [a, b] : [b, a]
    const current = confidence.get(older.id) ?? { value: older.confidence ?? 1, supersededBy: older.supersededBy }
    const after = loweredConfidence(current.value, anomaly.severity)
    confidence.set(older.id, { value: after, supersededBy: newer.id })
    return {
      status: "resolved",
      correction: {
        correctionType: "confidence_adjustment",
        targetUnitId: older.id,
        beforeState: { confidence_score: current.value, superseded_by: current.supersededBy },
        afterState: { confidence_score: after, superseded_by: newer.id },
        confidenceDelta: round(after - current.value),
        supersede: { unitId: older.id, confidence: after, by: newer.id }
      }
    }
  }
  if (anomaly.type === "flaw_missing_step" || anomaly.type === "flaw_temporal_violation") {
    return {
      status: "acknowledged",
      correction: {
        correctionType: "chain_repair_suggestion",
        targetUnitId: anomaly.unitIds[0] ?? null,
        beforeState: {},
        afterState: { suggestion: "Add intermediary evidence or adjust causal ordering." },
        confidenceDelta: null,
        supersede: null
      }
    }
  }
  return { correction: null, status: "open" }
}
