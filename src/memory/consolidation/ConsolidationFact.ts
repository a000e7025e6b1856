/**
 * The records consolidation works with: a fact as it is read for consolidation, an observation already stored,
 * and a draft — one change to write (create, update or merge) with the sources it rests on.
 */
import type { Scope } from "./ObservationScopes.ts"

export interface ConsolidationFact {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly tags: ReadonlyArray<string>
  readonly observationScopes: unknown
  readonly mentionedAt: Date | null
  readonly occurredStart: Date | null
  readonly seq: number
  readonly entities: ReadonlyArray<{ readonly id: string; readonly name: string; readonly type: string | null }>
}

export interface StoredObservation {
  readonly id: string
  readonly text: string
  readonly tags: Scope
  readonly sourceFactIds: ReadonlyArray<string>
  readonly key: string | null
  readonly version: number
}

export type ObservationChange = "created" | "updated" | "merged"

export interface ObservationDraft {
  /** The stored observation this changes; null creates a new one. */
  readonly targetId: string | null
  readonly scope: Scope
  readonly text: string
  /** The offline consolidator's grouping key (subject and topic); null for language-model observations. */
  readonly key: string | null
  /** Every source after the change. */
  readonly sourceFactIds: ReadonlyArray<string>
  /** The facts this change adds. */
  readonly addedFactIds: ReadonlyArray<string>
  readonly change: ObservationChange
  readonly previousText: string | null
  /** Near-duplicate observations folded into this one; they are deleted when the draft is written. */
  readonly absorbedIds: ReadonlyArray<string>
}

export const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => [...new Set([...a, ...b])]
