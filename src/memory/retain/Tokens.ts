/**
 * Token counting and chunking with a real tokenizer (cl100k, as used by common chat models), so
 * `retain_chunk_size` and recall's `max_tokens` mean what clients expect. Chunks break at paragraph, then
 * sentence, then word boundaries — never inside a word.
 */
import { countTokens as countTokensUncached, decode, encode } from "gpt-tokenizer/encoding/cl100k_base"

/**
 * Texts counted lately and their counts. Recall counts every result's text against `max_tokens`, and the same
 * memories come back recall after recall: with 50 clients recalling, byte-pair encoding them again was 9 % of the main
 * thread (`bench/isolation.ts` phase 9, `--cpu-prof`). A memory's text never changes, so a count is never stale. The
 * caps bound what the cache can keep alive to ~20 MB of text at worst (texts past `cacheableLength` are counted each
 * time); mostly it holds strings the brain holds anyway.
 */
const counted = new Map<string, number>()
const cacheEntries = 10_000
const cacheableLength = 1_024

/** The text's cl100k token count, as `gpt-tokenizer` counts it. */
export const countTokens = (text: string): number => {
  if (text.length > cacheableLength) return countTokensUncached(text)
  const known = counted.get(text)
  if (known !== undefined) return known
  const count = countTokensUncached(text)
  // Oldest first out: a Map iterates in insertion order.
  if (counted.size >= cacheEntries) counted.delete(counted.keys().next().value!)
  counted.set(text, count)
  return count
}

const paragraphs = (text: string) => text.split(/\n\s*\n/).map((part) => part.trim()).filter((part) => part !== "")

const sentences = (text: string) =>
  text.match(/[^.!?\n]+(?:[.!?]+["')\]]*|\n|$)/g)?.map((part) => part.trim()).filter((part) => part !== "") ?? [text]

/** Splits a piece longer than the limit at token boundaries (a single huge sentence or a code block). */
const hardSplit = (text: string, limit: number): Array<string> => {
  const tokens = encode(text)
  const pieces: Array<string> = []
  for (let start = 0; start < tokens.length; start += limit) pieces.push(decode(tokens.slice(start, start + limit)).trim())
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
    else for (const sentence of sentences(paragraph)) {
      if (countTokensUncached(sentence) <= maxTokens) units.push(sentence)
      else units.push(...hardSplit(sentence, maxTokens))
    }
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
