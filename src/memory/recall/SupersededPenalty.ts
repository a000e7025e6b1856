/**
 * Current facts before the facts they replaced. A fact superseded at retain (a newer fact contradicted it) keeps
 * its place in the bank as history, but its final recall score is lowered by a fixed share, applied after every
 * reranker so no later stage undoes it.
 */

import { byRerankedScore } from "./Candidates.ts"

/**
 * 15 %: enough to put a replacement above the fact it replaced when both match the query about equally (they
 * share most words by construction), small enough that a superseded fact that matches much better — a question
 * about the past — still ranks where its evidence puts it.
 */
export const supersededPenalty = 0.15

export const demoteSuperseded = <
  T extends { readonly score: number; readonly fused: { readonly id: string; readonly combined: number } }
>(
  ranked: ReadonlyArray<T>,
  isSuperseded: (id: string) => boolean
): Array<T> => {
  if (!ranked.some((item) => isSuperseded(item.fused.id))) return [...ranked]
  return ranked
    .map((item) => isSuperseded(item.fused.id) ? { ...item, score: item.score * (1 - supersededPenalty) } : item)
    .sort(byRerankedScore)
}
