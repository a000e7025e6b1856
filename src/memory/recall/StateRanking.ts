/**
 * Questions about a state — where someone works or lives, what they use, drive, or who they are with — answered
 * with the state valid at the time asked: now for "Where does Alice work?", then for "Where did Alice work in March
 * 2023?". A bank keeps every state it was told (history is kept); the ranking alone decides which comes first.
 *
 * Offline and deterministic. A fact is a state of its subject (the entity it names first) in a slot (employment,
 * residence, tool, vehicle, partner), found by cue words; a fact that ends a state ("no longer works at", "broke
 * up") is an end, never a current state. Facts of one (subject, slot) form a chain ordered by their time (when it
 * happened, else when it was said). For a question about the present the chain's latest state is ranked first
 * among the chain's members — fetched from the bank when retrieval missed it — and the older states follow in
 * reverse order; for a question naming a past time, the state that had begun by then and was not yet replaced.
 * This also covers replacements that are not negations (a new employer, a new city, a chain A → B → C), which
 * write-time supersession cannot see.
 */
import type { UnitRow } from "../UnitRow.ts"

export type Slot = "employment" | "residence" | "tool" | "vehicle" | "partner"

const factCues: ReadonlyArray<readonly [Slot, RegExp]> = [
  [
    "employment",
    /\b(works?|worked|working) (at|for)\b|\bjob (at|with)\b|\bemploy(ed|s)? (at|by)\b|\bhired\b|\bjoin(s|ed|ing)\b|\bposition at\b|\bresign(s|ed)?\b|\bquit\b|\b(engineer|manager|developer|designer|analyst|intern|director|nurse|teacher) (at|for)\b/
  ],
  [
    "residence",
    /\b(lives?|living|lived) in\b|\bmov(es|ed|ing|e) (to|back to)\b|\brelocat\w* to\b|\bbased in\b|\bresid\w* in\b/
  ],
  ["tool", /\b(uses?|using|used)\b|\bswitch(es|ed)? to\b|\bmigrat\w* to\b/],
  [
    "vehicle",
    /\b(drives?|driving|drove)\b|\bbought an? (new |used )?(car|truck|bike|motorcycle|van)\b|\bowns an? (car|truck|motorcycle)\b/
  ],
  [
    "partner",
    /\b(dating|dates|dated|married|engaged|divorced)\b|\bbroke up\b|\b(partner|girlfriend|boyfriend|wife|husband)\b|\bseeing\b/
  ]
]

/** A fact that says a state ended rather than what the state is. */
const endCue =
  /\bno longer\b|\bnot anymore\b|\b(quit|resigned|divorced|stopped)\b|\bbroke up\b|\bleft (his|her|their|the|a)? ?(job|company|position)\b|\bmoved (out|away)\b/

const questionCues: ReadonlyArray<readonly [Slot, RegExp]> = [
  ["employment", /\b(work|works|working|worked|job|employer|company|employed)\b/],
  ["residence", /\b(live|lives|living|lived|city|town|home|reside|based)\b/],
  ["tool", /\b(use|uses|using|used|tool|editor|software|stack)\b/],
  ["vehicle", /\b(drive|drives|driving|drove|car|vehicle)\b/],
  ["partner", /\b(dating|date|partner|married|girlfriend|boyfriend|wife|husband|seeing|relationship)\b/]
]

const pastCue = /\b(did|was|were|used to|previously|formerly|before|originally|at first|back then)\b/

/** What a state question asks: its slot and the time it is about (`null`: now). */
export interface StateQuestion {
  readonly slot: Slot
  readonly at: number | null
}

/**
 * The state question `query` asks, if it asks one: its slot, and the moment it is about — the named time's end when
 * it names one, now when it is in the present tense. A past-tense question with no time ("Where did Alice work?")
 * asks about no one moment, and is left as it is.
 */
export const stateQuestion = (query: string, namedTime: { readonly end: Date } | null): StateQuestion | undefined => {
  const text = query.toLowerCase()
  const found = questionCues.find(([, cue]) => cue.test(text))
  if (found === undefined) return undefined
  if (namedTime !== null) return { slot: found[0], at: namedTime.end.getTime() }
  return pastCue.test(text) ? undefined : { slot: found[0], at: null }
}

/** The state a fact states, if any: its slot, its subject, whether it ends the state, and its time. */
export interface StateFact {
  readonly id: string
  readonly slot: Slot
  readonly subject: string
  readonly ends: boolean
  readonly time: number
}

const timeOf = (row: UnitRow): number =>
  (row.occurredStart ?? row.mentionedAt ?? row.createdAt)?.getTime() ?? Number.NEGATIVE_INFINITY

/** The entity a fact names first: its subject. */
export const subjectOf = (row: UnitRow): string | undefined => {
  const text = row.text.toLowerCase()
  let best: { name: string; at: number } | undefined
  for (const name of row.entityNames ?? []) {
    const at = text.indexOf(name.toLowerCase())
    if (at >= 0 && (best === undefined || at < best.at)) best = { name, at }
  }
  return best?.name
}

export const stateFact = (row: UnitRow, slot: Slot): StateFact | undefined => {
  if (row.factType !== "world" && row.factType !== "experience") return undefined
  const text = row.text.toLowerCase()
  const cue = factCues.find(([name]) => name === slot)![1]
  if (!cue.test(text)) return undefined
  const subject = subjectOf(row)
  if (subject === undefined) return undefined
  return { id: row.id, slot, subject, ends: endCue.test(text), time: timeOf(row) }
}

/** The state valid at `at` (now when null) in a chain: the latest state begun by then, unless an end came after it. */
const validState = (chain: ReadonlyArray<StateFact>, at: number | null): StateFact | undefined => {
  const begun = chain.filter((fact) => at === null || fact.time <= at).sort((a, b) =>
    b.time - a.time || (a.id < b.id ? -1 : 1)
  )
  const latest = begun[0]
  if (latest === undefined) return undefined
  if (!latest.ends) return latest
  // An end only says the state before it is over: the valid state is the latest one that is not an end, if it began
  // after the end (a new job after a resignation); otherwise nothing is current and no order is imposed.
  return undefined
}

export interface Ranked {
  readonly id: string
  readonly score: number
}

/**
 * The ranking reordered for a state question: within each chain (one subject, the question's slot) that the ranking
 * touches, the valid state first and the others after it, newest first, taking the chain's scores in that order.
 * `extra` are the chains' other facts (from the bank, not retrieved): the valid state joins the ranking at the
 * chain's best score when it was missing. Items outside every chain keep their places.
 */
export const rankStates = <T extends Ranked>(
  ranked: ReadonlyArray<T>,
  rows: ReadonlyMap<string, UnitRow>,
  question: StateQuestion,
  extra: ReadonlyArray<UnitRow>,
  join: (row: UnitRow, score: number) => T
): Array<T> => {
  const facts = new Map<string, StateFact>()
  for (const item of ranked) {
    const row = rows.get(item.id)
    const fact = row === undefined ? undefined : stateFact(row, question.slot)
    if (fact !== undefined) facts.set(fact.id, fact)
  }
  const subjects = new Set([...facts.values()].map((fact) => fact.subject))
  if (subjects.size === 0) return [...ranked]
  const chains = new Map<string, Array<StateFact>>()
  const extraRows = new Map<string, UnitRow>()
  for (const row of extra) {
    const fact = facts.has(row.id) ? undefined : stateFact(row, question.slot)
    if (fact !== undefined && subjects.has(fact.subject)) {
      facts.set(fact.id, fact)
      extraRows.set(row.id, row)
    }
  }
  for (const fact of facts.values()) {
    const chain = chains.get(fact.subject)
    if (chain === undefined) chains.set(fact.subject, [fact])
    else chain.push(fact)
  }
  let out = [...ranked]
  for (const chain of chains.values()) {
    const valid = validState(chain, question.at)
    if (valid === undefined) continue
    const members = out.filter((item) => facts.get(item.id)?.subject === chain[0]!.subject)
    if (members.length === 0) continue
    // Missing from the ranking: the valid state joins it at the chain's best score.
    if (!members.some((item) => item.id === valid.id)) {
      const row = extraRows.get(valid.id)
      if (row === undefined) continue
      const joined = join(row, members[0]!.score)
      out = [...out.slice(0, out.indexOf(members[0]!)), joined, ...out.slice(out.indexOf(members[0]!))]
      members.unshift(joined)
    }
    const order = [valid, ...chain.filter((fact) => fact !== valid).sort((a, b) => b.time - a.time)]
      .map((fact) => members.find((item) => item.id === fact.id))
      .filter((item): item is T => item !== undefined)
    const places = members.map((item) => out.indexOf(item)).sort((a, b) => a - b)
    const scores = members.map((item) => item.score).sort((a, b) => b - a)
    places.forEach((place, k) => {
      out[place] = { ...order[k]!, score: scores[k]! }
    })
  }
  return out
}
