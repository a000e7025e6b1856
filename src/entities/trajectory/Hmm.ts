/**
 * The hidden Markov model behind an entity's trajectory: pure math over labels and embeddings, no I/O, so every
 * number a client sees can be checked by hand. Labels only seed the model (transition counts, state centroids);
 * the path reported is the Viterbi decoding, which may disagree with the labels where the evidence does.
 */

/** Row-stochastic K×K matrix: `A[i][j] = (C[i][j] + α) / (Σ_j C[i][j] + α·K)` from consecutive label pairs. */
export const laplaceTransitions = (labels: ReadonlyArray<number>, k: number, alpha: number): Array<Array<number>> => {
  const counts = Array.from({ length: k }, () => new Array<number>(k).fill(0))
  for (let t = 1; t < labels.length; t++) counts[labels[t - 1]!]![labels[t]!]! += 1
  return counts.map((row) => {
    const total = row.reduce((sum, count) => sum + count, 0)
    return row.map((count) => (count + alpha) / (total + alpha * k))
  })
}

const epsilon = 1e-6

const logSumExp = (values: ReadonlyArray<number>) => {
  const max = Math.max(...values)
  if (max === -Infinity) return -Infinity
  return max + Math.log(values.reduce((sum, value) => sum + Math.exp(value - max), 0))
}

export const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let dot = 0
  let normA = 0
  let normB = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    normA += a[i]! * a[i]!
    normB += b[i]! * b[i]!
  }
  return dot / ((Math.sqrt(normA) + epsilon) * (Math.sqrt(normB) + epsilon))
}

/** Mean embedding of the observations labelled with each state; a state nobody carries gets the zero vector. */
export const centroids = (
  observations: ReadonlyArray<ArrayLike<number>>,
  labels: ReadonlyArray<number>,
  k: number
): Array<Float64Array> => {
  const dimensions = observations[0]?.length ?? 0
  const sums = Array.from({ length: k }, () => new Float64Array(dimensions))
  const counts = new Array<number>(k).fill(0)
  observations.forEach((vector, t) => {
    const state = labels[t]!
    counts[state]! += 1
    for (let d = 0; d < dimensions; d++) sums[state]![d]! += vector[d]!
  })
  return sums.map((sum, state) => (counts[state]! === 0 ? sum : sum.map((value) => value / counts[state]!)))
}

/**
 * How sharply emissions follow cosine: `B[t][s] ∝ exp(κ · cos(o_t, c_s))`, a von Mises–Fisher emission. The
 * reference's `cos / Σ cos` is nearly uniform for sentence embeddings (facts about one entity all have high
 * cosines to every centroid), which leaves the path to the transitions alone: the stickiest state then swallows
 * the whole history. With κ = 20 a cosine gap of 0.05 between two states weighs e ≈ 2.7 to 1.
 */
export const concentration = 20

/** `log B[t][s]`: the softmax over states of κ times each observation's cosine to each state's centroid. */
export const logEmissions = (
  observations: ReadonlyArray<ArrayLike<number>>,
  stateCentroids: ReadonlyArray<ArrayLike<number>>
): Array<Array<number>> =>
  observations.map((vector) => {
    const scores = stateCentroids.map((centroid) => concentration * cosine(vector, centroid))
    const normaliser = logSumExp(scores)
    return scores.map((score) => score - normaliser)
  })

/** Max-product decoding in log space from a uniform start; ties keep the lower state index. */
export const viterbi = (
  logB: ReadonlyArray<ReadonlyArray<number>>,
  transitions: ReadonlyArray<ReadonlyArray<number>>
) => {
  const k = transitions.length
  if (logB.length === 0 || k === 0) return []
  const logA = transitions.map((row) => row.map(Math.log))
  let scores = logB[0]!.map((emission) => Math.log(1 / k) + emission)
  const back: Array<Array<number>> = []
  for (let t = 1; t < logB.length; t++) {
    const pointers = new Array<number>(k).fill(0)
    const next = new Array<number>(k).fill(-Infinity)
    for (let j = 0; j < k; j++) {
      for (let i = 0; i < k; i++) {
        const candidate = scores[i]! + logA[i]![j]!
        if (candidate > next[j]!) {
          next[j] = candidate
          pointers[j] = i
        }
      }
      next[j]! += logB[t]![j]!
    }
    back.push(pointers)
    scores = next
  }
  let state = 0
  for (let s = 1; s < k; s++) if (scores[s]! > scores[state]!) state = s
  const path = [state]
  for (let t = back.length - 1; t >= 0; t--) {
    state = back[t]![state]!
    path.unshift(state)
  }
  return path
}

/** `log P(O | λ)` by the forward algorithm. */
export const forwardLogProb = (
  logB: ReadonlyArray<ReadonlyArray<number>>,
  transitions: ReadonlyArray<ReadonlyArray<number>>
) => {
  const k = transitions.length
  if (logB.length === 0 || k === 0) return 0
  const logA = transitions.map((row) => row.map(Math.log))
  let alpha = logB[0]!.map((emission) => Math.log(1 / k) + emission)
  for (let t = 1; t < logB.length; t++) {
    alpha = Array.from({ length: k }, (_, j) => logSumExp(alpha.map((value, i) => value + logA[i]![j]!)) + logB[t]![j]!)
  }
  return logSumExp(alpha)
}

const multiply = (a: ReadonlyArray<ReadonlyArray<number>>, b: ReadonlyArray<ReadonlyArray<number>>) =>
  a.map((row) => b[0]!.map((_, j) => row.reduce((sum, value, m) => sum + value * b[m]![j]!, 0)))

/** `A^h` by repeated squaring. */
export const matrixPower = (matrix: ReadonlyArray<ReadonlyArray<number>>, power: number): Array<Array<number>> => {
  let result: Array<Array<number>> = matrix.map((row, i) => row.map((_, j) => (i === j ? 1 : 0)))
  let base = matrix.map((row) => [...row])
  for (let remaining = power; remaining > 0; remaining = Math.floor(remaining / 2)) {
    if (remaining % 2 === 1) result = multiply(result, base)
    base = multiply(base, base)
  }
  return result
}

/** The distribution over states `horizon` steps after the current state: row `current` of `A^horizon`. */
export const forecast = (transitions: ReadonlyArray<ReadonlyArray<number>>, current: number, horizon: number) =>
  matrixPower(transitions, horizon)[current]!

/** `1 − exp(−max(0, −log P / (T·K)))` in [0, 1]: higher means the sequence is less likely under its own model. */
export const anomalyScore = (logProb: number, steps: number, k: number) => {
  if (steps === 0 || k === 0 || !Number.isFinite(logProb)) return 0
  return Math.min(1, Math.max(0, 1 - Math.exp(-Math.max(0, -logProb / (steps * k)))))
}

export interface HmmResult {
  readonly transitions: Array<Array<number>>
  readonly path: Array<number>
  readonly forecast: Array<number>
  readonly forwardLogProb: number
  readonly anomalyScore: number
}

/** The whole model for one labelled sequence of embeddings. */
export const fitAndDecode = (options: {
  readonly observations: ReadonlyArray<ArrayLike<number>>
  readonly labels: ReadonlyArray<number>
  readonly k: number
  readonly alpha: number
  readonly horizon: number
}): HmmResult => {
  const transitions = laplaceTransitions(options.labels, options.k, options.alpha)
  const logB = logEmissions(options.observations, centroids(options.observations, options.labels, options.k))
  const path = viterbi(logB, transitions)
  const logProb = forwardLogProb(logB, transitions)
  return {
    transitions,
    path,
    forecast: forecast(transitions, path.at(-1) ?? 0, options.horizon),
    forwardLogProb: logProb,
    anomalyScore: anomalyScore(logProb, options.observations.length, options.k)
  }
}
