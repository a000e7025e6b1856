/**
 * The nodes of the state surface (§6.2): one per entity named in the evidence and one per tag carried by at least
 * two memories, each with its confidence, current state, distinct memories, conviction (how much its evidence
 * agrees) and semantic change magnitude. Pure; statuses and events are added by `ChangeEvents` and `StateGraph`.
 */
import type { StateUnit } from "./StateUnits.ts"
import { unitNegated, unitNormalized } from "./StateUnits.ts"
import { cosine } from "../Cosine.ts"
import { clamp, slug } from "./TextSignals.ts"

export type NodeKind = "entity" | "topic"

export interface StateGroup {
  readonly id: string
  readonly kind: NodeKind
  readonly name: string
  readonly title: string
  /** Every memory of the node, oldest first (ties by id). */
  readonly units: ReadonlyArray<StateUnit>
  /** The memories that say something new, oldest first (see `distinctUnits`). */
  readonly distinct: ReadonlyArray<StateUnit>
  readonly latest: StateUnit
  readonly confidence: number
  readonly recency: number
  readonly conviction: number | null
  readonly semanticChangeMagnitude: number | null
  readonly meanEmbedding: Float32Array | null
}

const dayMillis = 86_400_000
const duplicateCosine = 0.97
const duplicateWindow = 32
/**
 * Pairwise measures look at a node's newest memories only: an entity named in 1,500 memories would otherwise cost
 * a million comparisons, and its newest evidence is what its state is about.
 */
export const pairwiseWindow = 150

export const recency = (
  at: number | null,
  now: number
) => (at === null ? 0.2 : 1 / (1 + Math.max(0, now - at) / dayMillis / 30))

const byTime = (a: StateUnit, b: StateUnit) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Drops a memory that repeats a kept one: the same normalised text, or a near-identical embedding (cosine ≥ 0.97)
 * with the same polarity among the last 32 kept (repeats come close together; comparing with every kept memory
 * made this quadratic). Unlike the reference, a negated near-copy ("Alice no longer works at Acme") is never a
 * duplicate: it is the contradiction the surface exists to show.
 */
export const distinctUnits = (units: ReadonlyArray<StateUnit>): Array<StateUnit> => {
  const kept: Array<StateUnit> = []
  const texts = new Set<string>()
  for (const unit of units) {
    const text = unitNormalized(unit)
    if (texts.has(text)) continue
    const polarity = unitNegated(unit)
    let repeat = false
    for (let k = kept.length - 1; k >= Math.max(0, kept.length - duplicateWindow) && unit.embedding !== null; k--) {
      const other = kept[k]!
      if (
        other.embedding !== null && unitNegated(other) === polarity &&
        cosine(unit.embedding, other.embedding) >= duplicateCosine
      ) {
        repeat = true
        break
      }
    }
    if (repeat) continue
    texts.add(text)
    kept.push(unit)
  }
  return kept
}

/**
 * Mean pairwise cosine of the memories' embeddings: 1 when they all say the same, low when they scatter. With unit
 * vectors û, Σ_{i<j} û_i·û_j = (‖Σ û‖² − n) / 2, so this is linear in the memories rather than quadratic.
 */
export const conviction = (units: ReadonlyArray<StateUnit>): number | null => {
  const vectors = units.flatMap((unit) => (unit.embedding === null ? [] : [unit.embedding]))
  const first = vectors[0]
  if (first === undefined || vectors.length < 2) return null
  const sum = new Float64Array(first.length)
  let unitCount = 0
  let count = 0
  for (const vector of vectors) {
    if (vector.length !== first.length) continue
    count++
    let norm = 0
    for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
    if (norm === 0) continue
    const scale = 1 / Math.sqrt(norm)
    for (let i = 0; i < vector.length; i++) sum[i]! += vector[i]! * scale
    unitCount++
  }
  if (count < 2) return null
  let squared = 0
  for (let i = 0; i < sum.length; i++) squared += sum[i]! * sum[i]!
  return (squared - unitCount) / (count * (count - 1))
}

/** The largest step in meaning between consecutive distinct memories (1 − cosine). */
export const changeMagnitude = (distinct: ReadonlyArray<StateUnit>): number | null => {
  let largest: number | null = null
  for (let i = 1; i < distinct.length; i++) {
    const [a, b] = [distinct[i - 1]!.embedding, distinct[i]!.embedding]
    if (a === null || b === null) continue
    largest = Math.max(largest ?? 0, 1 - cosine(a, b))
  }
  return largest
}

export const nodeConfidence = (units: ReadonlyArray<StateUnit>, latestAt: number, now: number) => {
  const proofs = units.reduce((sum, unit) => sum + unit.proofs, 0)
  const accesses = units.reduce((sum, unit) => sum + unit.accesses, 0)
  return clamp(
    0.2 + Math.min(0.35, 0.15 * Math.log1p(units.length)) + Math.min(0.15, 0.04 * Math.log1p(proofs)) +
      Math.min(0.15, 0.04 * Math.log1p(accesses)) + 0.25 * recency(latestAt, now)
  )
}

const meanOf = (units: ReadonlyArray<StateUnit>) => {
  const vectors = units.flatMap((unit) => (unit.embedding === null ? [] : [unit.embedding]))
  const first = vectors[0]
  if (first === undefined) return null
  const mean = new Float32Array(first.length)
  let count = 0
  for (const vector of vectors) {
    if (vector.length !== first.length) continue
    for (let i = 0; i < vector.length; i++) mean[i]! += vector[i]!
    count++
  }
  for (let i = 0; i < mean.length; i++) mean[i]! /= count
  return mean
}

/** The latest memory: by time, then by the most proof. */
const latestOf = (units: ReadonlyArray<StateUnit>) =>
  units.reduce((best, unit) => (unit.at > best.at || (unit.at === best.at && unit.proofs > best.proofs) ? unit : best))

/** The groups at or above `confidenceMin`, of the requested kind. */
export const stateGroups = (
  units: ReadonlyArray<StateUnit>,
  options: { readonly confidenceMin: number; readonly nodeKind: "all" | NodeKind },
  now: number
): Array<StateGroup> => {
  const members = new Map<string, { kind: NodeKind; name: string; units: Array<StateUnit> }>()
  const add = (kind: NodeKind, name: string, unit: StateUnit) => {
    const id = `${kind}:${slug(name)}`
    const group = members.get(id)
    if (group === undefined) members.set(id, { kind, name, units: [unit] })
    else if (group.units.at(-1) !== unit) group.units.push(unit)
  }
  for (const unit of units) {
    if (options.nodeKind !== "topic") { for (const entity of unit.entities) add("entity", entity, unit) }
    if (options.nodeKind !== "entity") { for (const tag of unit.tags) add("topic", tag, unit) }
  }
  const groups: Array<StateGroup> = []
  for (const [id, group] of members) {
    if (group.kind === "topic" && group.units.length < 2) continue
    const sorted = [...group.units].sort(byTime)
    const latest = latestOf(sorted)
    const confidence = nodeConfidence(sorted, latest.at, now)
    if (confidence < options.confidenceMin) continue
    const recent = sorted.slice(-pairwiseWindow)
    const distinct = distinctUnits(recent)
    groups.push({
      id,
      kind: group.kind,
      name: group.name,
      title: group.kind === "topic" ? `#${group.name}` : group.name,
      units: sorted,
      distinct,
      latest,
      confidence,
      recency: recency(latest.at, now),
      conviction: conviction(recent),
      semanticChangeMagnitude: changeMagnitude(distinct),
      meanEmbedding: meanOf(recent)
    })
  }
  return groups
}
