/**
 * The token counts recall budgets by: the cached count of a text is always gpt-tokenizer's count of that text, for
 * texts seen again, texts past the cache's size (evicted and counted anew) and long texts never cached.
 */
import { assert, describe, it } from "@effect/vitest"
import { countTokens as reference } from "gpt-tokenizer/encoding/cl100k_base"
import { countTokens } from "../../../src/memory/retain/Tokens.ts"

const words = [
  "Alice",
  "works",
  "at",
  "Acme",
  "since",
  "2021",
  "naïve",
  "café",
  "🙂",
  "—",
  "the",
  "data",
  "engineer",
  "\n"
]
const textOf = (seed: number, length: number) =>
  Array.from({ length }, (_, i) => words[(seed * 31 + i * 17 + (seed >> 3)) % words.length]).join(
    seed % 2 === 0 ? " " : ""
  )

describe("token counts", () => {
  it("equal gpt-tokenizer's for repeated, evicted and long texts", () => {
    const texts = Array.from({ length: 25_000 }, (_, i) => textOf(i, 3 + (i % 40)))
    // Twice over more texts than the cache keeps: the second pass hits evicted and kept entries alike.
    for (let pass = 0; pass < 2; pass++) {
      for (const text of texts) assert.strictEqual(countTokens(text), reference(text), text)
    }
    const long = textOf(7, 2_000)
    assert.strictEqual(countTokens(long), reference(long))
    assert.strictEqual(countTokens(long), reference(long))
  })
})
