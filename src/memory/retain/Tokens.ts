/**
 * Token counting and chunking with a real tokenizer (cl100k, as used by common chat models), so
 * `retain_chunk_size` and recall's `max_tokens` mean what clients expect. Chunks break at paragraph, then
 * sentence, then word boundaries — never inside a word.
 */
import { countTokens, encode, decode } from "gpt-tokenizer/encoding/cl100k_base"

export { countTokens }

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
  if (countTokens(trimmed) <= maxTokens) return [trimmed]
  const units: Array<string> = []
  for (const paragraph of paragraphs(trimmed)) {
    if (countTokens(paragraph) <= maxTokens) units.push(paragraph)
    else for (const sentence of sentences(paragraph)) {
      if (countTokens(sentence) <= maxTokens) units.push(sentence)
      else units.push(...hardSplit(sentence, maxTokens))
    }
  }
  const chunks: Array<string> = []
  let current = ""
  let currentTokens = 0
  for (const unit of units) {
    const unitTokens = countTokens(unit)
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
