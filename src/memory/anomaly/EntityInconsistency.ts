/**
 * Entity inconsistency: a new statement and an earlier one about the same entity that disagree in polarity,
 * found through the entity (the entity links retain writes to each entity's 8 most recent units; the reference
 * read 15) rather than by vector search, so a pair the nearest-neighbour search ranked too low is still seen. The entity's own name does not count as a shared
 * subject word: every statement about Alice shares "alice". Pure.
 */
import { clamp01, type Detected, pairKeyOf, round, type Statement } from "./Detected.ts"
import { bestClauses, signalsOf } from "./Polarity.ts"

export const entityPolicy = {
  minSimilarity: 0.5,
  maxSimilarity: 0.95,
  /** Subject words the disagreeing clauses share besides the entity names, and their share of the shorter clause. */
  minSharedWords: 2,
  minSharedRatio: 0.6,
  severityScale: 0.7,
  minSeverity: 0.3
}

export const judgeEntityPair = (
  fresh: Statement,
  stored: Statement,
  similarity: number,
  shared: { readonly entityIds: ReadonlyArray<string>; readonly names: ReadonlyArray<string> }
): Detected | null => {
  const policy = entityPolicy
  if (similarity < policy.minSimilarity || similarity > policy.maxSimilarity) return null
  const left = signalsOf(fresh.text)
  const right = signalsOf(stored.text)
  if (left.tokenCount < 2 || right.tokenCount < 2) return null
  const names = new Set(shared.names.flatMap((name) => name.toLowerCase().split(/\s+/)))
  const words = bestClauses(fresh.text, stored.text, names)
  if (
    words === null || !words.opposite || words.shared.length < policy.minSharedWords ||
    words.ratio < policy.minSharedRatio
  ) {
    return null
  }
  const severity = clamp01(policy.severityScale * similarity)
  if (severity < policy.minSeverity) return null
  return {
    type: "entity_inconsistency",
    severity: round(severity),
    unitIds: [fresh.id, stored.id],
    entityIds: [...shared.entityIds],
    description: "Statements about the same entity disagree.",
    metadata: { similarity: round(similarity), overlap_tokens: words.shared, candidate_id: stored.id },
    pairKey: pairKeyOf([fresh.contentHash, stored.contentHash])
  }
}
