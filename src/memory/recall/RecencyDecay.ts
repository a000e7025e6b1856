/**
 * Recency decay: a bank that sets `retention.recency_half_life_days` has recall prefer what it learned recently. Half
 * of a memory's final score is relevance that never decays; the other half halves for every half-life of the
 * memory's age (from when it was mentioned, or stored, to the question's reference time), so an old memory that
 * matches much better still ranks above a new one that barely matches. Kept apart from supersession
 * (`SupersededPenalty.ts`): an old fact is not a replaced one. Pure, and applied to rows both recall sources return
 * alike, so the brain and SQL rank the same.
 */
import { byRerankedScore } from "./Candidates.ts"

/** The share of a score that decays; the rest is kept whatever the memory's age. */
export const decayingShare = 0.5
const dayMillis = 86_400_000

/** The factor a memory's score is multiplied by: 1 when new, towards `1 - decayingShare` as it ages. */
export const recencyFactor = (ageMillis: number, halfLifeDays: number) =>
  1 - decayingShare + decayingShare * Math.pow(2, -Math.max(0, ageMillis) / (halfLifeDays * dayMillis))

export const decayByRecency = <
  T extends { readonly score: number; readonly fused: { readonly id: string; readonly combined: number } }
>(
  ranked: ReadonlyArray<T>,
  learnedAt: (id: string) => Date | null | undefined,
  reference: Date,
  halfLifeDays: number | undefined
): Array<T> => {
  if (halfLifeDays === undefined || halfLifeDays <= 0) return [...ranked]
  return ranked
    .map((item) => {
      const at = learnedAt(item.fused.id)
      return at == null
        ? item
        : { ...item, score: item.score * recencyFactor(reference.getTime() - at.getTime(), halfLifeDays) }
    })
    .sort(byRerankedScore)
}
