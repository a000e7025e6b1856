/**
 * The identity of a fact for deduplication: its text with case, punctuation, whitespace and the date notes
 * the offline extractor appends stripped, hashed. Re-sending the same statement therefore hashes the same.
 */
import { createHash } from "node:crypto"

export const normalizeFact = (text: string): string =>
  text
    .replace(/\s\[[^\]]*\]$/, "")
    .toLowerCase()
    .normalize("NFKC")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()

export const contentHash = (text: string): string =>
  createHash("sha256").update(normalizeFact(text)).digest("hex").slice(0, 32)

export const chunkHash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 32)

/** Word-set overlap, used with vector similarity to recognise a reworded repeat of a stored fact. */
export const wordJaccard = (a: string, b: string): number => {
  const left = new Set(normalizeFact(a).split(" "))
  const right = new Set(normalizeFact(b).split(" "))
  let shared = 0
  for (const word of left) if (right.has(word)) shared++
  return shared / (left.size + right.size - shared || 1)
}

/** Numbers carry meaning that word vectors ignore: statements with different figures are never duplicates. */
export const sameNumbers = (a: string, b: string): boolean => {
  const numbers = (text: string) => [...normalizeFact(text).matchAll(/\d+/g)].map((match) => match[0]).sort().join(" ")
  return numbers(a) === numbers(b)
}
