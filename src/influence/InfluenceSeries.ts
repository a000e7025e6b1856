/**
 * The influence trend over days, as pure functions: an exponentially weighted moving average (alpha 0.35), a 90 %
 * band around the running mean of that average, and anomalies by robust z-score (median and MAD) or Tukey's IQR
 * fences.
 */
const alpha = 0.35
const band = 1.645
const madScale = 0.6745
const robustZLimit = 3.5
const reportZ = 2.5

export const ewma = (values: ReadonlyArray<number>): Array<number> => {
  const out: Array<number> = []
  for (const value of values) out.push(out.length === 0 ? value : alpha * value + (1 - alpha) * out[out.length - 1]!)
  return out
}

/** For each point: mean ± 1.645 σ of the averages up to it, within [0, 1]. */
export const bands = (smoothed: ReadonlyArray<number>): Array<{ lower: number; upper: number }> =>
  smoothed.map((_, index) => {
    const prefix = smoothed.slice(0, index + 1)
    const mean = prefix.reduce((sum, v) => sum + v, 0) / prefix.length
    const sigma = Math.sqrt(prefix.reduce((sum, v) => sum + (v - mean) ** 2, 0) / prefix.length)
    return { lower: Math.max(0, mean - band * sigma), upper: Math.min(1, mean + band * sigma) }
  })

const median = (sorted: ReadonlyArray<number>): number => {
  if (sorted.length === 0) return 0
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export interface SeriesAnomaly {
  readonly index: number
  readonly zscore: number
  readonly iqr: boolean
}

/**
 * Points far from the rest: robust z = 0.6745 (v − median) / MAD, and Tukey's fences at 1.5 IQR (quartiles as the
 * medians of the lower and upper halves, the middle point left out for an odd count); with fewer than four points
 * only the z-score decides. Reported when |z| ≥ 2.5 or outside the fences.
 */
export const anomalies = (values: ReadonlyArray<number>): Array<SeriesAnomaly> => {
  if (values.length === 0) return []
  const sorted = [...values].sort((a, b) => a - b)
  const center = median(sorted)
  const mad = Math.max(1e-9, median(values.map((v) => Math.abs(v - center)).sort((a, b) => a - b)))
  const half = Math.floor(sorted.length / 2)
  const q1 = median(sorted.slice(0, half))
  const q3 = median(sorted.slice(sorted.length % 2 === 1 ? half + 1 : half))
  const spread = q3 - q1
  const found: Array<SeriesAnomaly> = []
  values.forEach((value, index) => {
    const zscore = madScale * (value - center) / mad
    const fenced = values.length >= 4
      ? value < q1 - 1.5 * spread || value > q3 + 1.5 * spread || Math.abs(zscore) >= robustZLimit
      : Math.abs(zscore) >= robustZLimit
    if (Math.abs(zscore) >= reportZ || fenced) found.push({ index, zscore: Number(zscore.toFixed(3)), iqr: fenced })
  })
  return found
}
