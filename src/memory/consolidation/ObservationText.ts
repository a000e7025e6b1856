/**
 * The text of an offline observation: its subject and topic up front, then the most recent distinct clauses of
 * its facts in the order they happened — "Melanie — painting: painted a lake sunrise last year (2022); painting is
 * a fun way to express Melanie's feelings". Repeated statements appear once; a long history keeps its latest part
 * and says how much came before, so an observation stays a summary rather than a transcript.
 */
import { sameNumbers, wordJaccard } from "../retain/ContentHash.ts"
import type { AnalyzedFact } from "./FactAnalysis.ts"

export const textPolicy = {
  maxClauses: 6,
  maxWords: 110,
  /** Clauses this similar (word overlap) say the same thing: the later one is kept. */
  repeatOverlap: 0.8
}

const chronological = (a: AnalyzedFact, b: AnalyzedFact) => a.time - b.time || a.seq - b.seq

/** Words that open a sentence but not a name: lower-cased when the clause is not the first one. */
const openers = new Set([
  "the",
  "a",
  "an",
  "this",
  "that",
  "these",
  "those",
  "it",
  "it's",
  "its",
  "there",
  "they",
  "we",
  "our",
  "he",
  "she",
  "his",
  "her",
  "their",
  "some",
  "all",
  "every",
  "each",
  "what",
  "when"
])

const continued = (clause: string) => {
  const first = clause.split(/\s/)[0]!
  return openers.has(first.toLowerCase()) ? first.toLowerCase() + clause.slice(first.length) : clause
}

const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== "").length

export const label = (subjectName: string | null, topic: string) =>
  subjectName === null ? topic.charAt(0).toUpperCase() + topic.slice(1) : `${subjectName} — ${topic}`

/** The most common written form of the topic among the facts ("support group" over "group"). */
export const topicLabel = (head: string, facts: ReadonlyArray<AnalyzedFact>): string => {
  const counts = new Map<string, number>()
  for (const fact of facts) {
    for (const topic of fact.topics) {
      if (topic.head === head) counts.set(topic.phrase, (counts.get(topic.phrase) ?? 0) + 1)
    }
  }
  const best = [...counts.entries()].sort((a, b) =>
    b[1] - a[1] || b[0].split(" ").length - a[0].split(" ").length ||
    a[0].localeCompare(b[0])
  )[0]
  return best?.[0] ?? head
}

export const renderObservation = (
  subjectName: string | null,
  topic: string,
  facts: ReadonlyArray<AnalyzedFact>
): string => {
  const ordered = facts.filter((fact) => fact.clause !== null).sort(chronological)
  const distinct: Array<AnalyzedFact> = []
  for (const fact of ordered) {
    const repeat = distinct.findIndex((kept) =>
      wordJaccard(kept.clause!, fact.clause!) >= textPolicy.repeatOverlap && sameNumbers(kept.clause!, fact.clause!)
    )
    if (repeat >= 0) distinct.splice(repeat, 1)
    distinct.push(fact)
  }
  let shown = distinct.slice(-textPolicy.maxClauses)
  while (shown.length > 1 && wordCount(shown.map((fact) => fact.clause).join(" ")) > textPolicy.maxWords) {
    shown = shown.slice(1)
  }
  const earlier = distinct.length - shown.length
  const clauses = shown.map((fact, index) => index === 0 ? fact.clause! : continued(fact.clause!)).join("; ")
  return `${label(subjectName, topic)}: ${clauses}${earlier > 0 ? ` (and ${earlier} earlier)` : ""}.`
}
