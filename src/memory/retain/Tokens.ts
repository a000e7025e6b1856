/**
 * Token counting and chunking with a real tokenizer (cl100k, as used by common chat models), so
 * `retain_chunk_size` and recall's `max_tokens` mean what clients expect. Chunks break at paragraph, then
 * sentence, then word boundaries — never inside a word.
 */
import { countTokens as countTokensUncached, decode, encode } from "gpt-tokenizer/encoding/cl100k_base"

/**
 * Texts counted lately and their counts. Recall counts every result's text against `max_tokens`, and the same
 * memories come back recall after recall: with 50 clients recalling, byte-pair encoding them again was 9 % of the main
 * thread (`bench/isolation.ts` phase 9, `--cpu-prof`). A memory's text never changes, so a count is never stale.
 * The cache is keyed by a hash of the text, not the text, so a forgotten memory's content is not kept alive here; two
 * texts of the same length colliding on 53 bits of hash among 10k entries is not a practical worry, and its cost would
 * be one result's token count. Texts past `cacheableLength` are counted each time.
 */
const counted = new Map<number, number>()
const cacheEntries = 10_000
const cacheableLength = 1_024

/** FNV-1a over the UTF-16 code units in two 32-bit lanes, folded with the length into a safe integer. */
const textKey = (text: string): number => {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995) ^ (b >>> 15)
  }
  return ((a >>> 0) * 2 ** 21) + (((b >>> 0) ^ text.length) & 0x1fffff)
}

/** The text's cl100k token count, as `gpt-tokenizer` counts it. */
export const countTokens = (text: string): number => {
  if (text.length > cacheableLength) return countTokensUncached(text)
  const key = textKey(text)
  const known = counted.get(key)
  if (known !== undefined) return known
  const count = countTokensUncached(text)
  // Oldest first out: a Map iterates in insertion order.
  if (counted.size >= cacheEntries) counted.delete(counted.keys().next().value!)
  counted.set(key, count)
  return count
}

const paragraphs = (text: string) => text.split(/\n\s*\n/).map((part) => part.trim()).filter((part) => part !== "")

const sentences = (text: string) =>
  text.match(/[^.!?\n]+(?:[.!?]+["')\]]*|\n|$)/g)?.map((part) => part.trim()).filter((part) => part !== "") ?? [text]

/** Splits a piece longer than the limit at token boundaries (a single huge sentence or a code block). */
const hardSplit = (text: string, limit: number): Array<string> => {
  const tokens = encode(text)
  const pieces: Array<string> = []
  for (let start = 0; start < tokens.length; start += limit) {
    pieces.push(decode(tokens.slice(start, start + limit)).trim())
  }
  return pieces.filter((piece) => piece !== "")
}

/** Splits text into chunks of at most `maxTokens` tokens, packing whole paragraphs and sentences greedily. */
export const chunkText = (text: string, maxTokens: number): Array<string> => {
  const trimmed = text.trim()
  if (trimmed === "") return []
  if (countTokensUncached(trimmed) <= maxTokens) return [trimmed]
  const units: Array<string> = []
  for (const paragraph of paragraphs(trimmed)) {
    if (countTokensUncached(paragraph) <= maxTokens) units.push(paragraph)
    else {for (const sentence of sentences(paragraph)) {
        if (countTokensUncached(sentence) <= maxTokens) units.push(sentence)
        else units.push(...hardSplit(sentence, maxTokens))
      }}
  }
  const chunks: Array<string> = []
  let current = ""
  let currentTokens = 0
  for (const unit of units) {
    const unitTokens = countTokensUncached(unit)
    if (current !== "" && currentTokens + unitTokens + 1 > maxTokens) {
      chunks.push(current)
      current = ""
      currentTokens = 0
    }
    current = current === "" ? unit : `${current}\n\n${unit}`
    currentTokens += unitTokens + (currentTokens === 0 ? 0 : 1)
  }
  if (current !== "") chunks.push(current)
  return chunks
}
