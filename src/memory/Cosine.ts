/**
 * Cosine similarity of two embeddings held in memory. Vectors of different lengths come from different embedding
 * models (a bank mid-way through re-embedding) and are not comparable: they score 0, as does a zero vector.
 */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  if (a.length !== b.length) return 0
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}
