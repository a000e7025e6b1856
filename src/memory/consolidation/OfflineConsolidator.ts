/**
 * Consolidation with no language model: each fact worth keeping is filed under its subject (the speaker, or the
 * person it names) and one topic noun, and every (subject, topic) pair of a scope is one observation whose text
 * is re-rendered from its facts whenever it gains one. The topic is, in order of preference, a word of the bank's
 * `observations_mission`, a topic the subject already has an observation for, or the noun the subject's facts in
 * the batch share most. Deterministic: the same facts always give the same observations.
 */
import { Effect } from "effect"
import type { ConsolidationFact, ObservationDraft } from "./ConsolidationFact.ts"
import { union } from "./ConsolidationFact.ts"
import { analyzedAll } from "./FactAnalyses.ts"
import { type AnalyzedFact, analyzeFact } from "./FactAnalysis.ts"
import { factsByIds, observationsByKeys } from "./ObservationReads.ts"
import type { Scope } from "./ObservationScopes.ts"
import { renderObservation, topicLabel } from "./ObservationText.ts"

const subjectKey = (fact: AnalyzedFact) => fact.subjectId ?? fact.subjectName?.toLowerCase() ?? ""
const keyOf = (subject: string, head: string) => `${subject}|${head}`
const headOf = (key: string) => key.slice(key.lastIndexOf("|") + 1)

/** Content words of a mission, lemmatised the way topics are ("Track travel plans" → travel, plan, track). */
export const missionTerms = (mission: string | null): ReadonlySet<string> =>
  mission === null
    ? new Set()
    : new Set(
      analyzeFact({
        id: "mission",
        text: mission,
        factType: "world",
        tags: [],
        observationScopes: null,
        mentionedAt: null,
        occurredStart: null,
        seq: 0,
        entities: []
      }).topics.map((topic) => topic.head)
    )

const mostCommon = (values: ReadonlyArray<string>): string | null => {
  const counts = new Map<string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null
}

/** The observation text for a group of facts filed under `head`. */
export const renderGroup = (head: string, facts: ReadonlyArray<AnalyzedFact>): string =>
  renderObservation(
    mostCommon(facts.map((fact) => fact.subjectName).filter((name) => name !== null)),
    topicLabel(head, facts),
    facts
  )

/** Re-renders a merged offline observation from all its sources (the offline `MergedText`). */
export const offlineMergedText = (bankId: string) =>
  Effect.fnUntraced(
    function*(survivor: { readonly text: string; readonly key: string | null }, sources: ReadonlyArray<string>) {
      if (survivor.key === null) return survivor.text
      const facts = yield* analyzedAll(yield* factsByIds(bankId, sources))
      return facts.some((fact) => fact.clause !== null) ? renderGroup(headOf(survivor.key), facts) : survivor.text
    }
  )

export const planOffline = Effect.fn("OfflineConsolidator.plan")(function*(options: {
  readonly bankId: string
  readonly scope: Scope
  readonly facts: ReadonlyArray<ConsolidationFact>
  readonly missionTerms: ReadonlySet<string>
}) {
  const worthy = (yield* analyzedAll(options.facts)).filter((fact) => fact.clause !== null && fact.topics.length > 0)

  // How much of each subject's facts in this batch are about each noun (a phrase head counts fully, once per fact).
  const frequency = new Map<string, Map<string, number>>()
  for (const fact of worthy) {
    const counts = frequency.get(subjectKey(fact)) ?? new Map<string, number>()
    const strongest = new Map<string, number>()
    for (const topic of fact.topics) strongest.set(topic.head, Math.max(strongest.get(topic.head) ?? 0, topic.weight))
    for (const [head, weight] of strongest) counts.set(head, (counts.get(head) ?? 0) + weight)
    frequency.set(subjectKey(fact), counts)
  }
  const candidateKeys = [
    ...new Set(worthy.flatMap((fact) => fact.topics.map((topic) => keyOf(subjectKey(fact), topic.head))))
  ]
  const existing = new Map(
    (yield* observationsByKeys(options.bankId, options.scope, candidateKeys))
      .map((observation) => [observation.key!, observation])
  )

  const groups = new Map<string, Array<AnalyzedFact>>()
  for (const fact of worthy) {
    const subject = subjectKey(fact)
    const score = (head: string) =>
      (options.missionTerms.has(head) ? 1000 : 0) +
      (existing.has(keyOf(subject, head))
        ? 100 + Math.min(existing.get(keyOf(subject, head))!.sourceFactIds.length, 50)
        : 0) +
      (frequency.get(subject)?.get(head) ?? 0)
    // Highest score; on a tie a phrase head over a modifier, then the noun said first.
    const head = fact.topics.reduce((best, topic) => {
      const difference = score(topic.head) - score(best.head)
      return difference > 0 || (difference === 0 && topic.weight > best.weight) ? topic : best
    }).head
    const key = keyOf(subject, head)
    groups.set(key, [...(groups.get(key) ?? []), fact])
  }

  // The stored facts of every observation the batch updates, in one read rather than one per observation.
  const updatedSources = [...groups].flatMap(([key, facts]) => {
    const stored = existing.get(key)
    if (stored === undefined) return []
    const ids = facts.map((fact) => fact.id)
    return ids.some((id) => !stored.sourceFactIds.includes(id)) ? stored.sourceFactIds : []
  })
  const storedFacts = new Map(
    (yield* analyzedAll(yield* factsByIds(options.bankId, [...new Set(updatedSources)]))).map((fact) => [fact.id, fact])
  )
  const batchFacts = new Map(worthy.map((fact) => [fact.id, fact]))

  const drafts: Array<ObservationDraft> = []
  for (const [key, facts] of groups) {
    const stored = existing.get(key)
    const ids = facts.map((fact) => fact.id)
    if (stored === undefined) {
      drafts.push({
        targetId: null,
        scope: options.scope,
        text: renderGroup(headOf(key), facts),
        key,
        sourceFactIds: ids,
        addedFactIds: ids,
        change: "created",
        previousText: null,
        absorbedIds: []
      })
      continue
    }
    const added = ids.filter((id) => !stored.sourceFactIds.includes(id))
    if (added.length === 0) continue
    const sources = union(stored.sourceFactIds, added)
    // As `factsByIds` read them: world and experience facts that still exist, in retain order.
    const all = sources.flatMap((id) => {
      const fact = storedFacts.get(id) ?? batchFacts.get(id)
      return fact === undefined ? [] : [fact]
    }).sort((a, b) => a.seq - b.seq)
    drafts.push({
      targetId: stored.id,
      scope: options.scope,
      text: renderGroup(headOf(key), all),
      key,
      sourceFactIds: sources,
      addedFactIds: added,
      change: "updated",
      previousText: stored.text,
      absorbedIds: []
    })
  }
  return drafts
})
