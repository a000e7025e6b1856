/**
 * The bank's activity model over the 24 UTC hours, as pure functions: hour counts (the histogram), 24 scalar
 * Kalman filters smoothing the hourly share from build to build (kalman_lite), and a two-state hidden Markov model
 * (inactive/active) over the hours of successive events, fitted by a few Baum–Welch iterations (hmm_lite). Every
 * variant yields a distribution over the hours; predictions weight the hours of the next `horizon` hours by it.
 * No I/O here: `ActivityModels` reads the events and stores the state.
 */
import type { PredictionMode } from "../brain/BrainSettings.ts"

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
 */
export const fitHmm = (prior: HmmState, observations: ReadonlyArray<number>): HmmState => {
  const length = observations.length
  if (length < 2) return prior
  let transition = prior.transition.map((row) => [...row])
  let emission = prior.emission.map((row) => [...row])
  let initial = [...prior.initial]
  const alpha = Array.from({ length }, () => [0, 0])
  const beta = Array.from({ length }, () => [0, 0])
  const scale = new Array<number>(length).fill(0)
  for (let iteration = 0; iteration < baumWelchIterations; iteration++) {
    for (let t = 0; t < length; t++) {
      const symbol = observations[t]!
      let sum = 0
      for (let s = 0; s < 2; s++) {
        const into = t === 0
          ? initial[s]!
          : alpha[t - 1]![0]! * transition[0]![s]! + alpha[t - 1]![1]! * transition[1]![s]!
        alpha[t]![s] = into * emission[s]![symbol]!
        sum += alpha[t]![s]!
      }
      scale[t] = sum > 0 ? sum : 1e-300
      for (let s = 0; s < 2; s++) alpha[t]![s] = alpha[t]![s]! / scale[t]!
    }
    beta[length - 1] = [1, 1]
    for (let t = length - 2; t >= 0; t--) {
      const next = observations[t + 1]!
      for (let s = 0; s < 2; s++) {
        beta[t]![s] = (transition[s]![0]! * emission[0]![next]! * beta[t + 1]![0]! +
          transition[s]![1]! * emission[1]![next]! * beta[t + 1]![1]!) / scale[t + 1]!
      }
    }
    const gamma = alpha.map((a, t) => normalize([a[0]! * beta[t]![0]!, a[1]! * beta[t]![1]!]))
    const expectedTransitions = [[0, 0], [0, 0]]
    for (let t = 0; t < length - 1; t++) {
      const next = observations[t + 1]!
      const xi = [[0, 0], [0, 0]]
      let total = 0
      for (let from = 0; from < 2; from++) {
        for (let to = 0; to < 2; to++) {
          xi[from]![to] = alpha[t]![from]! * transition[from]![to]! * emission[to]![next]! * beta[t + 1]![to]!
          total += xi[from]![to]!
        }
      }
      for (let from = 0; from < 2; from++) {
        for (let to = 0; to < 2; to++) expectedTransitions[from]![to]! += total > 0 ? xi[from]![to]! / total : 0
      }
    }
    initial = gamma[0]!
    transition = expectedTransitions.map((row, from) => {
      const normalized = normalize(row)
      return normalized[0]! + normalized[1]! > 0 ? normalized : [...transition[from]!]
    })
    emission = [0, 1].map((s) => {
      const row = emptyCounts().map(() => emissionSmoothing)
      for (let t = 0; t < length; t++) row[observations[t]!]! += gamma[t]![s]!
      return normalize(row)
    })
  }
  return { transition, emission, initial }
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
