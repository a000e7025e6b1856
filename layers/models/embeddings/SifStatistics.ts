/**
 * The statistics behind smooth-inverse-frequency (SIF) sentence vectors (Arora, Liang & Ma, 2017): word
 * probabilities estimated from frequency rank, the weights a/(a + p(w)), and two directions of sentence space —
 * the common component every sentence shares, and the direction sentences use least. Computed once when the
 * GloVe table is converted; pure and deterministic (float64, fixed order, fixed starting vectors).
 */

/** The SIF smoothing constant; the paper finds 1e-4..1e-3 best, and 1e-3 keeps content words near weight 1. */
export const DEFAULT_SIF_A = 1e-3

/** Sentence length assumed for the sentence statistics (a typical retained fact). */
const SENTENCE_LENGTH = 10

/**
 * p(w) for a frequency-ordered vocabulary without counts: Zipf's law with exponent 1, p(rank r) = 1 / (r · H_n).
 * The GloVe vocabulary is ordered by corpus count, so rank is all the package tells us.
 */
export const zipfProbabilities = (size: number): Float32Array => {
  let harmonic = 0
  for (let rank = 1; rank <= size; rank++) harmonic += 1 / rank
  const probabilities = new Float32Array(size)
  for (let i = 0; i < size; i++) probabilities[i] = 1 / ((i + 1) * harmonic)
  return probabilities
}

export const sifWeight = (a: number, probability: number): number => a / (a + probability)

export interface SentenceDirections {
  /** The first principal (uncentred) component of SIF sentence vectors: the direction they all share. */
  readonly common: Float32Array
  /** A unit direction orthogonal to `common` along which sentence vectors have (close to) the least energy. */
  readonly unused: Float32Array
}

/**
 * Both directions come from the second-moment matrix of SIF sentence vectors under the unigram model — exact
 * rather than sampled: for sentences of n words drawn from p, with u_w = s_w·x_w,
 * E[v vᵀ] = (1/n)·Σ p_w u_w u_wᵀ + (1 − 1/n)·μ μᵀ where μ = Σ p_w u_w. `common` is its top eigenvector (sign
 * chosen to agree with μ), `unused` the bottom one (power iteration on λ₁·I − E[v vᵀ], then orthogonalised).
 */
export const sentenceDirections = (
  matrix: Float32Array,
  dimensions: number,
  probabilities: Float32Array,
  a: number
): SentenceDirections => {
  const size = probabilities.length
  const n = SENTENCE_LENGTH
  const moment = new Float64Array(dimensions * dimensions)
  const mean = new Float64Array(dimensions)
  const row = new Float64Array(dimensions)
  for (let w = 0; w < size; w++) {
    const p = probabilities[w]!
    const s = sifWeight(a, p)
    const offset = w * dimensions
    for (let d = 0; d < dimensions; d++) row[d] = matrix[offset + d]!
    const scale = (p * s * s) / n
    for (let i = 0; i < dimensions; i++) {
      mean[i]! += p * s * row[i]!
      const ri = scale * row[i]!
      const base = i * dimensions
      for (let j = i; j < dimensions; j++) moment[base + j]! += ri * row[j]!
    }
  }
  for (let i = 0; i < dimensions; i++) {
    for (let j = i; j < dimensions; j++) {
      moment[i * dimensions + j]! += (1 - 1 / n) * mean[i]! * mean[j]!
      moment[j * dimensions + i] = moment[i * dimensions + j]!
    }
  }
  const top = powerIteration(moment, dimensions, normalised(mean), 1_000)
  const common = dot(top.vector, mean) < 0 ? top.vector.map((value) => -value) : top.vector
  const shifted = new Float64Array(dimensions * dimensions)
  for (let i = 0; i < dimensions; i++) {
    for (let j = 0; j < dimensions; j++) {
      shifted[i * dimensions + j] = (i === j ? top.value : 0) - moment[i * dimensions + j]!
    }
  }
  const start = normalised(new Float64Array(dimensions).map((_, i) => 1 + i / dimensions))
  const bottom = powerIteration(shifted, dimensions, start, 20_000).vector
  const along = dot(bottom, common)
  const unused = normalised(bottom.map((value, i) => value - along * common[i]!))
  return { common: Float32Array.from(common), unused: Float32Array.from(unused) }
}

/** The dominant eigenvector (unit) and eigenvalue of a symmetric matrix, stopping once it no longer moves. */
const powerIteration = (matrix: Float64Array, dimensions: number, start: Float64Array, maxIterations: number) => {
  let vector = start
  let value = 0
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const next = new Float64Array(dimensions)
    for (let i = 0; i < dimensions; i++) {
      let sum = 0
      for (let j = 0; j < dimensions; j++) sum += matrix[i * dimensions + j]! * vector[j]!
      next[i] = sum
    }
    value = Math.sqrt(dot(next, next))
    if (value === 0) break
    const unit = next.map((entry) => entry / value)
    let change = 0
    for (let d = 0; d < dimensions; d++) change += (unit[d]! - vector[d]!) ** 2
    vector = unit
    if (change < 1e-24) break
  }
  return { vector, value }
}

const dot = (a: Float64Array, b: Float64Array) => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

const normalised = (vector: Float64Array): Float64Array => {
  const norm = Math.sqrt(dot(vector, vector))
  return norm === 0 ? vector : vector.map((value) => value / norm)
}
