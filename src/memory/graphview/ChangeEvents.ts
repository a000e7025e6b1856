/**
 * What moved on an entity node (§6.3): `change` between consecutive distinct memories that differ enough in
 * meaning (or words, without embeddings), and `contradiction` between two memories that share their subject
 * matter but not their polarity. Topic nodes produce none; `stale` events are decided in `StateGraph`, which knows
 * the edges. Pure.
 */
import type { StateGroup } from "./StateNodes.ts"
import type { StateUnit } from "./StateUnits.ts"
import { unitLeader, unitNegated, unitTokens } from "./StateUnits.ts"
import { cosine } from "../Cosine.ts"
import { clamp, jaccard, overlap } from "./TextSignals.ts"

export type ChangeType = "change" | "contradiction" | "stale"

export interface ChangeEvent {
  readonly id: string
  readonly node_id: string
  readonly change_type: ChangeType
  readonly before_state: string | null
  readonly after_state: string
  readonly confidence: number
  readonly time_window: string | null
  readonly evidence_ids: ReadonlyArray<string>
  readonly summary: string
  /** When the newer side of the event happened (epoch ms); not part of the response. */
  readonly at: number
}

const changeDistance = 0.12
const changeJaccard = 0.55
const contradictionCosine = 0.55
/** Only the newest events of one node are kept: a much-discussed entity would otherwise list hundreds. */
const eventsPerKind = 6

export const stateText = (text: string, max = 180) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)
const day = (at: number) => new Date(at).toISOString().slice(0, 10)
export const timeWindow = (from: number, to: number) => `${day(from)} to ${day(to)}`

const magnitudeLabel = (distance: number) =>
  distance < 0.15 ? " (minor update)" : distance < 0.35 ? " (role/state shift)" : " (major transition)"

const ledBy = (unit: StateUnit, name: string) => unitLeader(unit) === name.toLowerCase()

export const changeEvents = (group: StateGroup): Array<ChangeEvent> => {
  if (group.kind !== "entity") return []
  const events: Array<ChangeEvent> = []
  for (let i = 1; i < group.distinct.length; i++) {
    const previous = group.distinct[i - 1]!
    const current = group.distinct[i]!
    if (current.at <= previous.at) continue
    const overlapShare = jaccard(unitTokens(previous), unitTokens(current))
    const distance = previous.embedding !== null && current.embedding !== null
      ? 1 - cosine(previous.embedding, current.embedding)
      : null
    const moved = distance !== null ? distance >= changeDistance : overlapShare < changeJaccard
    if (!moved || !(ledBy(previous, group.name) || ledBy(current, group.name))) continue
    events.push({
      id: `event:${group.id}:change:${previous.id}:${current.id}`,
      node_id: group.id,
      change_type: "change",
      before_state: stateText(previous.text),
      after_state: stateText(current.text),
      confidence: clamp(group.confidence * (1 - 0.45 * overlapShare)),
      time_window: timeWindow(previous.at, current.at),
      evidence_ids: [previous.id, current.id],
      summary: `${group.title} appears to have changed from '${stateText(previous.text, 70)}' to '${
        stateText(current.text, 70)
      }'${distance === null ? "" : magnitudeLabel(distance)}`,
      at: current.at
    })
  }
  return events.slice(-eventsPerKind)
}

/**
 * Pairs that say opposite things about the same matter: at least two shared content words, opposite negation and,
 * with embeddings, a cosine of at least 0.55. The reference also requires cosine ≤ 0.96, which hides exactly the
 * plainest contradictions ("works at Acme" / "no longer works at Acme"); opposite polarity is the guard here.
 */
export const contradictionEvents = (group: StateGroup): Array<ChangeEvent> => {
  if (group.kind !== "entity") return []
  const events: Array<ChangeEvent> = []
  const units = group.distinct
  // Only pairs of opposite polarity can contradict: each newer memory is compared with the older ones of the other
  // polarity, newest first.
  const positions = { negated: [] as Array<number>, plain: [] as Array<number> }
  units.forEach((unit, index) => positions[unitNegated(unit) ? "negated" : "plain"].push(index))
  for (let j = units.length - 1; j > 0 && events.length < eventsPerKind; j--) {
    const newer = units[j]!
    const others = positions[unitNegated(newer) ? "plain" : "negated"]
    for (let k = others.length - 1; k >= 0 && events.length < eventsPerKind; k--) {
      if (others[k]! >= j) continue
      const older = units[others[k]!]!
      if (overlap(unitTokens(older), unitTokens(newer)) < 2) continue
      const sameDocument = older.docKey !== null && older.docKey === newer.docKey
      const led = [ledBy(older, group.name), ledBy(newer, group.name)]
      if (sameDocument ? !(led[0] && led[1]) : !(led[0] || led[1])) continue
      if (
        older.embedding !== null && newer.embedding !== null &&
        cosine(older.embedding, newer.embedding) < contradictionCosine
      ) continue
      events.push({
        id: `event:${group.id}:contradiction:${older.id}:${newer.id}`,
        node_id: group.id,
        change_type: "contradiction",
        before_state: stateText(older.text),
        after_state: stateText(newer.text),
        confidence: clamp(0.9 * group.confidence),
        time_window: timeWindow(older.at, newer.at),
        evidence_ids: [older.id, newer.id],
        summary: `Conflicting evidence for ${group.title}: '${stateText(older.text, 70)}' versus the newer '${
          stateText(newer.text, 70)
        }'.`,
        at: newer.at
      })
    }
  }
  return events
}
