/**
 * Contradiction and temporal inconsistency between a new statement and one of its nearest stored neighbours.
 * Starts from the reference's gates (opposite negation, shared words, cosine 0.55–0.96) and tightens what
 * "about the same subject" means; the temporal check stands on its own instead of hiding behind the
 * contradiction gates (behaviour-reference §16.10). Pure: the caller finds the candidates.
 */
import { clamp01, type Detected, pairKeyOf, round, type Statement } from "./Detected.ts"
import { bestClauses, clausesOf, overlap, signalsOf } from "./Polarity.ts"

export const contradictionPolicy = {
  /** Cosine band of a contradiction: below it the statements are about different things, above it a rewording. */
  minSimilarity: 0.55,
  maxSimilarity: 0.96,
  /** Content words both statements must share, and the share of the shorter statement's words that is. */
  minSharedWords: 2,
  minSharedRatio: 0.6,
  /**
   * Reported from this severity on. The reference's 0.3 reported most chat turns that share a topic and hold a
   * "not" somewhere; 0.6 keeps conflicts that cover a good part of both statements (tuned on LoCoMo).
   */
  minSeverity: 0.6,
  /** Temporal inconsistency: the same statement placed at two times between one day and 30 days apart. */
  temporalMaxDays: 30,
  temporalMinDays: 1,
  temporalMinJaccard: 0.6,
  temporalSeverityScale: 0.8,
  /**
   * Only a clash between two short statements (at most two asserting clauses each, sharing most of their subject
   * words) may supersede one of them: in a long chat turn a "not" somewhere is too weak a reason to demote it.
   */
  atomicMaxClauses: 2,
  atomicMinSharedRatio: 0.75
}

/**
 * How sure and how much it matters: the closeness of meaning, how much of the two statements the shared subject
 * covers (shared content words over the shorter statement's: a clash inside one clause of a long chat turn is
 * a smaller matter than two one-line facts that say opposite things), and how far the stored statement was believed. The reference divides by 1.44 for a proof count this service does not
 * keep, so its severity could never reach its own correction threshold (0.7); this one can.
 */
export const contradictionSeverity = (similarity: number, sharedRatio: number, confidence: number | null) =>
  clamp01(similarity * (confidence ?? 1) * (0.6 + 0.4 * sharedRatio))

const dayMs = 86_400_000

export const judgePair = (fresh: Statement, stored: Statement, similarity: number): Array<Detected> => {
  const policy = contradictionPolicy
  if (similarity < policy.minSimilarity || similarity > policy.maxSimilarity) return []
  const left = signalsOf(fresh.text)
  const right = signalsOf(stored.text)
  if (left.tokenCount < 2 || right.tokenCount < 2) return []
  const found: Array<Detected> = []
  const pairKey = pairKeyOf([fresh.contentHash, stored.contentHash])
  const unitIds = [fresh.id, stored.id]
  // Contradiction: the two clauses that share the subject disagree in polarity.
  const clauses = bestClauses(fresh.text, stored.text)
  const opposite = clauses !== null && clauses.opposite && clauses.shared.length >= policy.minSharedWords &&
    clauses.ratio >= policy.minSharedRatio
  const whole = overlap(left.words, right.words)
  if (opposite) {
    const shared = clauses
    const severity = contradictionSeverity(similarity, whole.ratio, stored.confidence)
    if (severity >= policy.minSeverity) {
      found.push({
        type: "contradiction",
        severity: round(severity),
        unitIds,
        entityIds: [],
        description: "Contradictory memory statements detected.",
        metadata: {
          similarity: round(similarity),
          overlap_tokens: shared.shared,
          candidate_id: stored.id,
          atomic_statements: whole.ratio >= policy.atomicMinSharedRatio &&
            clausesOf(fresh.text).length <= policy.atomicMaxClauses &&
            clausesOf(stored.text).length <= policy.atomicMaxClauses
        },
        pairKey
      })
    }
  }
  if (fresh.occurredStart !== null && stored.occurredStart !== null) {
    const deltaDays = Math.abs(fresh.occurredStart.getTime() - stored.occurredStart.getTime()) / dayMs
    const sameEvent = opposite ||
      (whole.shared.length >= policy.minSharedWords && whole.jaccard >= policy.temporalMinJaccard)
    if (sameEvent && deltaDays > policy.temporalMinDays && deltaDays <= policy.temporalMaxDays) {
      found.push({
        type: "temporal_inconsistency",
        severity: round(clamp01(policy.temporalSeverityScale * similarity)),
        unitIds,
        entityIds: [],
        description: "The same statement is placed at different times.",
        metadata: { similarity: round(similarity), delta_days: round(deltaDays, 2), candidate_id: stored.id },
        pairKey
      })
    }
  }
  return found
}
