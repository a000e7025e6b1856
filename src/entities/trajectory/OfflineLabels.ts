/**
 * The state vocabulary without a language model: k-means over the entity's fact embeddings (farthest-point
 * initialisation from the oldest fact, so the same facts always give the same states), each cluster named in
 * SCREAMING_SNAKE from the words that set its facts apart from the entity's other facts. Pure, no I/O.
 */
import { contentWords } from "../../research/Passages.ts"
import { cosine } from "./Hmm.ts"
import type { StateLabelling } from "./StateLabelling.ts"

/** 2 states for a handful of facts, up to 6 for a long history. */
export const clusterCount = (facts: number) => Math.max(2, Math.min(6, Math.round(Math.sqrt(facts / 2)), facts))

const maxIterations = 25

const meanOf = (vectors: ReadonlyArray<ArrayLike<number>>, dimensions: number) => {
  const mean = new Float64Array(dimensions)
  for (const vector of vectors) for (let d = 0; d < dimensions; d++) mean[d]! += vector[d]! / vectors.length
  return mean
}

const nearest = (vector: ArrayLike<number>, centers: ReadonlyArray<ArrayLike<number>>) => {
  let best = 0
  let bestScore = -Infinity
  centers.forEach((center, index) => {
    const score = cosine(vector, center)
    if (score > bestScore) {
      best = index
      bestScore = score
    }
  })
  return best
}

/** Cluster index per observation (cosine k-means); clusters are numbered by first appearance in time. */
export const kMeans = (vectors: ReadonlyArray<ArrayLike<number>>, k: number): Array<number> => {
  const dimensions = vectors[0]?.length ?? 0
  const centers: Array<ArrayLike<number>> = [vectors[0]!]
  while (centers.length < k) {
    // The fact least like any chosen center opens the next cluster; ties keep the older fact.
    let pick = 0
    let farthest = Infinity
    vectors.forEach((vector, index) => {
      const closeness = Math.max(...centers.map((center) => cosine(vector, center)))
      if (closeness < farthest) {
        farthest = closeness
        pick = index
      }
    })
    centers.push(vectors[pick]!)
  }
  let assignment = vectors.map((vector) => nearest(vector, centers))
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    const next = centers.map((center, cluster) => {
      const members = vectors.filter((_, index) => assignment[index] === cluster)
      return members.length === 0 ? center : meanOf(members, dimensions)
    })
    const reassigned = vectors.map((vector) => nearest(vector, next))
    centers.splice(0, centers.length, ...next)
    const settled = reassigned.every((cluster, index) => cluster === assignment[index])
    assignment = reassigned
    if (settled) break
  }
  const order = new Map<number, number>()
  for (const cluster of assignment) if (!order.has(cluster)) order.set(cluster, order.size)
  return assignment.map((cluster) => order.get(cluster)!)
}

const snake = (words: ReadonlyArray<string>) =>
  words.join("_").toUpperCase().replace(/[^\p{L}\p{N}]+/gu, "_").replace(/^_+|_+$/g, "")

/**
 * The two words most particular to each cluster: frequent among its facts, rare in the entity's other facts.
 * The entity's own name is in every fact and says nothing about its state, so it is left out.
 */
export const clusterNames = (
  texts: ReadonlyArray<string>,
  clusters: ReadonlyArray<number>,
  k: number,
  entityName: string
): Array<string> => {
  const nameWords = contentWords(entityName)
  const words = texts.map((text) =>
    [...contentWords(text)].filter((word) => !nameWords.has(word) && !/^\d+$/.test(word))
  )
  const names: Array<string> = []
  for (let cluster = 0; cluster < k; cluster++) {
    const inside = new Map<string, number>()
    const outside = new Map<string, number>()
    let insideCount = 0
    words.forEach((list, index) => {
      const target = clusters[index] === cluster ? inside : outside
      if (clusters[index] === cluster) insideCount++
      for (const word of list) target.set(word, (target.get(word) ?? 0) + 1)
    })
    const outsideCount = Math.max(1, texts.length - insideCount)
    const ranked = [...inside.entries()]
      .map(([word, count]) => ({
        word,
        score: count / Math.max(1, insideCount) - (outside.get(word) ?? 0) / outsideCount
      }))
      .sort((a, b) => b.score - a.score || a.word.localeCompare(b.word))
    const base = snake(ranked.slice(0, 2).map((entry) => entry.word)) || `STATE_${cluster + 1}`
    let name = base
    for (let suffix = 2; names.includes(name); suffix++) name = `${base}_${suffix}`
    names.push(name)
  }
  return names
}

/** Labels every fact with one state of a vocabulary derived from the facts themselves. */
export const offlineLabelling = (
  facts: ReadonlyArray<{ readonly text: string; readonly embedding: ArrayLike<number> }>,
  entityName: string
): StateLabelling => {
  const k = clusterCount(facts.length)
  const clusters = kMeans(facts.map((fact) => fact.embedding), k)
  const used = new Set(clusters).size
  const vocabulary = clusterNames(facts.map((fact) => fact.text), clusters, used, entityName)
  return { vocabulary, labels: clusters.map((cluster) => vocabulary[cluster]!) }
}
