/**
 * The bank's activity model over the 24 UTC hours, as pure functions: hour counts (the histogram), 24 scalar
 * Kalman filters smoothing the hourly share from build to build (kalman_lite), and a two-state hidden Markov model
 * (inactive/active) over the hours of successive events, fitted by a few Baum–Welch iterations (hmm_lite). Every
 * variant yields a distribution over the hours; predictions weight the hours of the next `horizon` hours by it.
 * No I/O here: `ActivityModels` reads the events and stores the state.
 */
import type { PredictionMode } from "../brain/BrainSettings.ts"
import { runWhole, type Sliced } from "../brain/Sliced.ts"

export const hours = 24
const processNoise = 0.01
const measurementNoise = 0.05
const baumWelchIterations = 5
const emissionSmoothing = 1e-6

export interface KalmanState {
  readonly state: ReadonlyArray<number>
  readonly variance: ReadonlyArray<number>
}

export interface HmmState {
  /** transition[from][to] over states 0 = inactive, 1 = active. */
  readonly transition: ReadonlyArray<ReadonlyArray<number>>
  /** emission[state][hour]. */
  readonly emission: ReadonlyArray<ReadonlyArray<number>>
  readonly initial: ReadonlyArray<number>
}

/** What is stored per bank: every variant is kept current, so changing the prediction mode needs no rebuild. */
export interface ActivityState {
  readonly counts: ReadonlyArray<number>
  readonly sampleCount: number
  readonly kalman: KalmanState
  readonly hmm: HmmState
}

const normalize = (values: ReadonlyArray<number>): Array<number> => {
  const total = values.reduce((sum, value) => sum + value, 0)
  return total > 0 ? values.map((value) => value / total) : values.map(() => 0)
}

export const emptyCounts = (): Array<number> => Array.from({ length: hours }, () => 0)

export const initialKalman = (): KalmanState => ({
  state: emptyCounts(),
  variance: Array.from({ length: hours }, () => 1)
})

/** Night hours favour the inactive state, working hours the active one; both rows normalized. */
export const initialHmm = (): HmmState => {
  const weight = (night: number, day: number, other: number) =>
    normalize(
      Array.from(
        { length: hours },
        (_, hour) => hour <= 5 || hour >= 22 ? night : hour >= 8 && hour <= 19 ? day : other
      )
    )
  return {
    transition: [[0.85, 0.15], [0.2, 0.8]],
    emission: [weight(0.08, 0.02, 0.04), weight(0.01, 0.07, 0.04)],
    initial: [0.6, 0.4]
  }
}

/** One predict/update step of each hour's filter, measuring the hour's share of all events. */
export const kalmanStep = (prior: KalmanState, counts: ReadonlyArray<number>): KalmanState => {
  const measured = normalize(counts)
  const state: Array<number> = []
  const variance: Array<number> = []
  for (let hour = 0; hour < hours; hour++) {
    const predicted = prior.variance[hour]! + processNoise
    const gain = predicted / (predicted + measurementNoise)
    state.push(prior.state[hour]! + gain * (measured[hour]! - prior.state[hour]!))
    variance.push((1 - gain) * predicted)
  }
  return { state, variance }
}

/**
 * Baum–Welch on the hours of successive events (scaled forward–backward), starting from `prior`. Fewer than two
 * observations leave the model as it was.
 *
 * Written over flat typed arrays and scalars: the first version allocated a few small arrays per observation and
 * iteration, and fitting the 2,000 hours a bank keeps held the event loop 40–130 ms in one piece (a CPU profile of
 * the isolation bench's server); it runs rarely, so it is seldom optimised. The arithmetic is the same, in the
 * same order, so the fit is the same to the bit (`test/activity/ActivityModel.test.ts` compares it with the
 * straightforward version).
 */
export const fitHmm = (prior: HmmState, observations: ReadonlyArray<number>): HmmState =>
  runWhole(fittingHmm(prior, observations))

/**
 * `fitHmm` as work that yields between its passes over the observations, for a caller that runs it in slices
 * (`runSliced`): even with flat arrays, a first fit runs as cold code, 40–70 ms for 2,000 hours.
 */
export function* fittingHmm(prior: HmmState, observations: ReadonlyArray<number>): Sliced<HmmState> {
  const length = observations.length
  if (length < 2) return prior
  let t00 = prior.transition[0]![0]!
  let t01 = prior.transition[0]![1]!
  let t10 = prior.transition[1]![0]!
  let t11 = prior.transition[1]![1]!
  let e0 = Float64Array.from(prior.emission[0]!)
  let e1 = Float64Array.from(prior.emission[1]!)
  let i0 = prior.initial[0]!
  let i1 = prior.initial[1]!
  // alpha, beta and gamma hold state 0 at 2t and state 1 at 2t + 1.
  const alpha = new Float64Array(length * 2)
  const beta = new Float64Array(length * 2)
  const gamma = new Float64Array(length * 2)
  const scale = new Float64Array(length)
  for (let iteration = 0; iteration < baumWelchIterations; iteration++) {
    for (let t = 0; t < length; t++) {
      const symbol = observations[t]!
      const into0 = t === 0 ? i0 : alpha[2 * t - 2]! * t00 + alpha[2 * t - 1]! * t10
      const a0 = into0 * e0[symbol]!
      const into1 = t === 0 ? i1 : alpha[2 * t - 2]! * t01 + alpha[2 * t - 1]! * t11
      const a1 = into1 * e1[symbol]!
      const sum = a0 + a1
      const scaled = sum > 0 ? sum : 1e-300
      scale[t] = scaled
      alpha[2 * t] = a0 / scaled
      alpha[2 * t + 1] = a1 / scaled
    }
    yield
    beta[2 * length - 2] = 1
    beta[2 * length - 1] = 1
    for (let t = length - 2; t >= 0; t--) {
      const next = observations[t + 1]!
      const b0 = beta[2 * t + 2]!
      const b1 = beta[2 * t + 3]!
      beta[2 * t] = (t00 * e0[next]! * b0 + t01 * e1[next]! * b1) / scale[t + 1]!
      beta[2 * t + 1] = (t10 * e0[next]! * b0 + t11 * e1[next]! * b1) / scale[t + 1]!
    }
    yield
    for (let t = 0; t < length; t++) {
      const g0 = alpha[2 * t]! * beta[2 * t]!
      const g1 = alpha[2 * t + 1]! * beta[2 * t + 1]!
      const total = g0 + g1
      gamma[2 * t] = total > 0 ? g0 / total : 0
      gamma[2 * t + 1] = total > 0 ? g1 / total : 0
    }
    let x00 = 0
    let x01 = 0
    let x10 = 0
    let x11 = 0
    for (let t = 0; t < length - 1; t++) {
      const next = observations[t + 1]!
      const b0 = beta[2 * t + 2]!
      const b1 = beta[2 * t + 3]!
      const p00 = alpha[2 * t]! * t00 * e0[next]! * b0
      const p01 = alpha[2 * t]! * t01 * e1[next]! * b1
      const p10 = alpha[2 * t + 1]! * t10 * e0[next]! * b0
      const p11 = alpha[2 * t + 1]! * t11 * e1[next]! * b1
      const total = p00 + p01 + p10 + p11
      x00 += total > 0 ? p00 / total : 0
      x01 += total > 0 ? p01 / total : 0
      x10 += total > 0 ? p10 / total : 0
      x11 += total > 0 ? p11 / total : 0
    }
    yield
    i0 = gamma[0]!
    i1 = gamma[1]!
    ;[t00, t01] = normalizedRow(x00, x01, t00, t01)
    ;[t10, t11] = normalizedRow(x10, x11, t10, t11)
    e0 = emissionOf(observations, gamma, 0)
    e1 = emissionOf(observations, gamma, 1)
  }
  return {
    transition: [[t00, t01], [t10, t11]],
    emission: [Array.from(e0), Array.from(e1)],
    initial: [i0, i1]
  }
}

/** A row of expected transitions as probabilities; the row before when nothing was expected to leave the state. */
const normalizedRow = (to0: number, to1: number, before0: number, before1: number): [number, number] => {
  const total = to0 + to1
  const row: [number, number] = total > 0 ? [to0 / total, to1 / total] : [0, 0]
  return row[0] + row[1] > 0 ? row : [before0, before1]
}

/** A state's emission over the hours: its share of each observation, smoothed, summing to one. */
const emissionOf = (
  observations: ReadonlyArray<number>,
  gamma: Float64Array,
  state: number
): Float64Array<ArrayBuffer> => {
  const row = new Float64Array(hours).fill(emissionSmoothing)
  for (let t = 0; t < observations.length; t++) row[observations[t]!]! += gamma[2 * t + state]!
  let total = 0
  for (let hour = 0; hour < hours; hour++) total += row[hour]!
  for (let hour = 0; hour < hours; hour++) row[hour] = total > 0 ? row[hour]! / total : 0
  return row
}

/** The long-run share of each state: the stationary distribution of the two-state chain. */
const stationary = (transition: ReadonlyArray<ReadonlyArray<number>>): [number, number] => {
  const toActive = transition[0]![1]!
  const toInactive = transition[1]![0]!
  const total = toActive + toInactive
  return total > 0 ? [toInactive / total, toActive / total] : [0.5, 0.5]
}

/** The share of activity each UTC hour gets under the chosen variant; all zero when there are no events. */
export const distribution = (mode: PredictionMode, model: ActivityState): Array<number> => {
  if (model.sampleCount === 0) return emptyCounts()
  switch (mode) {
    case "histogram":
      return normalize(model.counts)
    case "kalman_lite":
      return normalize(model.kalman.state.map((value) => Math.max(0, value)))
    case "hmm_lite": {
      const [inactive, active] = stationary(model.hmm.transition)
      return normalize(
        emptyCounts().map((_, hour) =>
          inactive * model.hmm.emission[0]![hour]! + active * model.hmm.emission[1]![hour]!
        )
      )
    }
  }
}

export interface PredictionPoint {
  readonly hour_utc: number
  readonly score: number
  /** The first start of this hour within the horizon. */
  readonly at: string
}

/**
 * The hours of the next `horizon` hours from `now` (the hour after the current one first), each scored by its share
 * of the activity expected in that window: an hour that comes twice in a two-day horizon counts twice. Highest
 * first; a horizon of one day or more lists every hour once.
 */
export const predict = (shares: ReadonlyArray<number>, horizon: number, now: Date): Array<PredictionPoint> => {
  const currentHour = Math.floor(now.getTime() / 3_600_000) * 3_600_000
  const occurrences = new Map<number, { count: number; first: number }>()
  for (let step = 1; step <= horizon; step++) {
    const start = currentHour + step * 3_600_000
    const hour = new Date(start).getUTCHours()
    const seen = occurrences.get(hour)
    occurrences.set(hour, { count: (seen?.count ?? 0) + 1, first: seen?.first ?? start })
  }
  const weights = [...occurrences].map(([hour, seen]) => ({
    hour,
    first: seen.first,
    weight: shares[hour]! * seen.count
  }))
  const total = weights.reduce((sum, entry) => sum + entry.weight, 0)
  return weights
    .map((entry) => ({
      hour_utc: entry.hour,
      score: round(total > 0 ? entry.weight / total : 0),
      at: new Date(entry.first).toISOString()
    }))
    .sort((a, b) => b.score - a.score || a.at.localeCompare(b.at))
}

export const round = (value: number) => Number(value.toFixed(6))
