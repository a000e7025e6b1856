/**
 * The shapes the detectors share: what they know of a stored statement and what they report. Detectors are
 * pure functions from these to `Detected` anomalies; storing them is `AnomalyStore`'s job.
 */
import type { AnomalyType } from "../../domain/Anomaly.ts"

export interface Statement {
  readonly id: string
  readonly text: string
  readonly factType: string
  readonly occurredStart: Date | null
  /** When it was said (mentioned), else when it happened, else when it was stored: what "newer" means. */
  readonly said: Date
  readonly seq: number
  readonly confidence: number | null
  readonly contentHash: string
  /** The statement that already replaced this one, if any. */
  readonly supersededBy: string | null
}

export interface Detected {
  readonly type: AnomalyType
  readonly severity: number
  readonly unitIds: ReadonlyArray<string>
  readonly entityIds: ReadonlyArray<string>
  readonly description: string
  readonly metadata: Record<string, unknown>
  /** The statements involved, by content: a suppressed key is never reported again. */
  readonly pairKey: string
}

export const clamp01 = (value: number) => Math.max(0, Math.min(1, value))

export const round = (value: number, digits = 4) => Number(value.toFixed(digits))

/** Sorted content hashes: the same statements give the same key whatever their unit ids or order. */
export const pairKeyOf = (hashes: ReadonlyArray<string>) => [...new Set(hashes)].sort().join("|")

/** Whether `a` was said before `b` (ties broken by retain order). */
export const saidBefore = (a: Statement, b: Statement) =>
  a.said.getTime() < b.said.getTime() || (a.said.getTime() === b.said.getTime() && a.seq < b.seq)
