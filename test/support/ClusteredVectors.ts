/**
 * Seeded vectors around a few random centres, as real embeddings cluster (uniform random vectors make any ANN index
 * look broken). The same `seed` gives the same centres, so queries drawn with it land near the stored vectors.
 */

/** A seeded generator of numbers in [0, 1). */
export const seededRandom = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

export const clusteredVectors = (count: number, seed: number, options: {
  readonly dimensions: number
  readonly centres: number
}) => {
  const next = seededRandom(seed)
  const centres = Array.from(
    { length: options.centres },
    () => Float32Array.from({ length: options.dimensions }, () => next() - 0.5)
  )
  return Array.from({ length: count }, () => {
    const centre = centres[Math.floor(next() * centres.length)]!
    return Float32Array.from(centre, (x) => x + (next() - 0.5) * 0.4)
  })
}
