/**
 * Fact analyses remembered between consolidation passes (see `analyzed`), and forgotten with the facts.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { runSliced } from "../../brain/Sliced.ts"
import type { ConsolidationFact } from "./ConsolidationFact.ts"
import { type AnalyzedFact, analyzeFact } from "./FactAnalysis.ts"

/**
 * The analysis of a fact, remembered: an observation is re-rendered from all its facts whenever it gains one, so
 * without this a subject's long-running topic had every one of its facts parsed by wink-nlp again on each pass
 * (the node CPU of consolidation grew with the size of the observations it updated). The analysis depends only on
 * what the fingerprint holds; a fact read again with anything different is analysed again. Bounded: the oldest
 * entries go first. An analysis holds the fact's clause, so every deletion of facts drops theirs
(`forgetAnalyses`, called where observations on deleted facts are released): a forgotten memory's words do not stay in the process's memory until they are evicted.
 */
const analyses = new Map<string, { readonly fingerprint: string; readonly analyzed: AnalyzedFact }>()
const maxAnalyses = 10_000

/** Drops the remembered analyses of deleted memories (their clauses are their content). */
export const forgetAnalyses = (ids: Iterable<string>) => {
  for (const id of ids) analyses.delete(id)
}

/** A digest, not the text itself: 10,000 remembered facts hold under 1 MB of fingerprints, not their texts again. */
const fingerprintOf = (fact: ConsolidationFact) =>
  createHash("sha1").update(JSON.stringify([
    fact.text,
    fact.factType,
    fact.mentionedAt?.getTime() ?? null,
    fact.occurredStart?.getTime() ?? null,
    fact.seq,
    fact.entities
  ])).digest("base64")

export const analyzed = (fact: ConsolidationFact): AnalyzedFact => {
  const fingerprint = fingerprintOf(fact)
  const known = analyses.get(fact.id)
  if (known !== undefined && known.fingerprint === fingerprint) return known.analyzed
  const analysis = analyzeFact(fact)
  analyses.delete(fact.id)
  analyses.set(fact.id, { fingerprint, analyzed: analysis })
  if (analyses.size > maxAnalyses) analyses.delete(analyses.keys().next().value!)
  return analysis
}

/**
 * The analyses of many facts, in slices with a turn of the event loop between them: a batch's facts parsed at once
 * held the loop 60-90 ms (a CPU profile of a server under fifty clients), and an observation re-rendered from all its
 * sources may hold hundreds.
 */
export const analyzedAll = (facts: ReadonlyArray<ConsolidationFact>): Effect.Effect<Array<AnalyzedFact>> =>
  runSliced(
    (function*() {
      const all: Array<AnalyzedFact> = []
      for (const fact of facts) {
        all.push(analyzed(fact))
        yield
      }
      return all
    })(),
    Effect.yieldNow
  )
