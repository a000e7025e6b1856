/**
 * Activity models passed between engram instances, as pure functions: the `.brain` file's `activity` section (a
 * versioned JSON document inside the binary section: the bank's own hour counts and model state), the hour counts
 * read back from it or from a remote's `GET …/sub-routine/histogram`, and the rule that folds learned counts into a
 * bank's own activity.
 *
 * The rule: each learned source is stored by key (`host/bank`) and replaced on every learn from it, never added,
 * so learning the same remote twice does not count it twice. At read time the sources' counts are summed and, when
 * their total exceeds the bank's own event count (or `learnedFloor` for a bank with little evidence of its own),
 * scaled down to it: learned activity never outweighs the bank's own more than 1:1. The shares are then the
 * weighted mix of the bank's own distribution (under its prediction mode) and the learned hour shares.
 * Only a bank's own counts are exported, so two instances learning from each other do not echo counts back.
 */
import type { PredictionMode } from "../brain/BrainSettings.ts"
import { type ActivityState, distribution, emptyCounts, hours } from "./ActivityModel.ts"

export const activitySectionFormat = "engram-activity"
export const activitySectionVersion = 1
/** The weight learned activity may have in a bank with fewer events of its own: a day's worth, one per hour. */
export const learnedFloor = 24

export interface LearnedActivity {
  readonly counts: ReadonlyArray<number>
  readonly events: number
  readonly via: "brain_file" | "rest_histogram"
  readonly merged_at: string
}

export type LearnedSources = Readonly<Record<string, LearnedActivity>>

export class ActivityExchangeError extends Error {}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** The `activity` section for a bank's own model (no learned counts: see the file's comment). */
export const encodeActivitySection = (state: ActivityState, mode: PredictionMode): Uint8Array =>
  encoder.encode(JSON.stringify({
    format: activitySectionFormat,
    version: activitySectionVersion,
    prediction_mode: mode,
    counts: state.counts,
    sample_count: state.sampleCount,
    kalman: state.kalman,
    hmm: state.hmm
  }))

/** Hour counts must be 24 finite, non-negative numbers. */
export const checkedCounts = (value: unknown, what: string): Array<number> => {
  if (!Array.isArray(value) || value.length !== hours) {
    throw new ActivityExchangeError(`${what} must hold ${hours} hour counts`)
  }
  return value.map((count) => {
    if (typeof count !== "number" || !Number.isFinite(count) || count < 0) {
      throw new ActivityExchangeError(`${what} holds a count that is not a finite non-negative number`)
    }
    return count
  })
}

/** The hour counts of a `.brain` file's `activity` section; throws `ActivityExchangeError` saying what is wrong. */
export const decodeActivitySection = (bytes: Uint8Array): Array<number> => {
  let document: unknown
  try {
    document = JSON.parse(decoder.decode(bytes))
  } catch {
    throw new ActivityExchangeError("the activity section is not UTF-8 JSON")
  }
  if (typeof document !== "object" || document === null) {
    throw new ActivityExchangeError("the activity section is not an object")
  }
  const record = document as Record<string, unknown>
  if (record["format"] !== activitySectionFormat) {
    throw new ActivityExchangeError("the activity section has an unknown format")
  }
  const version = record["version"]
  if (typeof version !== "number" || version < 1 || version > activitySectionVersion) {
    throw new ActivityExchangeError(`the activity section's version ${String(version)} is not supported`)
  }
  return checkedCounts(record["counts"], "the activity section")
}

/**
 * Hour counts from a remote's histogram response: its shares times its sample count, rounded. The remote's shares
 * follow its prediction mode, so these are the counts its distribution stands for, not necessarily its raw counts.
 */
export const countsFromHistogram = (body: unknown): Array<number> => {
  const record = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  const samples = record["sample_count"]
  const points = record["histogram"]
  if (typeof samples !== "number" || !Number.isFinite(samples) || samples < 0 || !Array.isArray(points)) {
    throw new ActivityExchangeError("the remote's histogram has no sample_count or histogram")
  }
  const counts = emptyCounts()
  for (const point of points) {
    const hour = (point as Record<string, unknown> | null)?.["hour_utc"]
    const score = (point as Record<string, unknown> | null)?.["score"]
    if (
      !Number.isInteger(hour) || (hour as number) < 0 || (hour as number) >= hours || typeof score !== "number" ||
      !(score >= 0)
    ) {
      throw new ActivityExchangeError("the remote's histogram holds an invalid point")
    }
    counts[hour as number] = Math.round(score * samples)
  }
  return counts
}

/** The learned sources as stored, tolerating a model stored before there were any. */
export const learnedOf = (model: unknown): LearnedSources => {
  const learned = (model as { learned?: unknown } | null)?.learned
  return typeof learned === "object" && learned !== null ? learned as LearnedSources : {}
}

export interface CombinedActivity {
  readonly shares: Array<number>
  readonly sampleCount: number
  /** The weight the learned sources carry after the 1:1 cap. */
  readonly learnedWeight: number
  readonly learnedEvents: number
}

/** The bank's own model and its learned sources, combined by the rule in the file's comment. */
export const combine = (mode: PredictionMode, state: ActivityState, learned: LearnedSources): CombinedActivity => {
  const own = distribution(mode, state)
  const learnedCounts = emptyCounts()
  for (const source of Object.values(learned)) {
    for (let hour = 0; hour < hours; hour++) learnedCounts[hour]! += source.counts[hour] ?? 0
  }
  const learnedEvents = learnedCounts.reduce((sum, n) => sum + n, 0)
  const local = state.sampleCount
  const weight = Math.min(learnedEvents, Math.max(local, learnedFloor))
  if (weight === 0) return { shares: own, sampleCount: local, learnedWeight: 0, learnedEvents }
  const total = local + weight
  const shares = own.map((share, hour) => (local * share + weight * (learnedCounts[hour]! / learnedEvents)) / total)
  return { shares, sampleCount: Math.round(total), learnedWeight: weight, learnedEvents }
}
