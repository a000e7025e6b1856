/** The compact GloVe vocabulary answers exactly as a `Map` from word to row filled in row order. */
import { assert, describe, it } from "@effect/vitest"
import { GloveVocabulary } from "../../../../layers/models/embeddings/GloveVocabulary.ts"

const encode = (words: ReadonlyArray<string>) => new TextEncoder().encode(words.join("\n"))

/** What the table held before: later rows win for a repeated word. */
const mapOf = (words: ReadonlyArray<string>) => new Map(words.map((word, row) => [word, row]))

describe("GloveVocabulary", () => {
  it("finds every word's row, the later one for a repeated word, and nothing else", () => {
    const words = ["the", "café", "naïve", "東京", "🙂", "", "dog", "the", "Dog", "do", "dogs", "a-b", "o'neill"]
    const vocabulary = new GloveVocabulary(encode(words))
    const map = mapOf(words)
    assert.strictEqual(vocabulary.size, words.length)
    assert.deepStrictEqual(vocabulary.words(), words)
    for (const probe of [...words, "cafe", "dog ", "DOG", "東", "🙂🙂", "\ud83d", "x".repeat(500), "unknown"]) {
      assert.strictEqual(vocabulary.get(probe), map.get(probe), JSON.stringify(probe))
      assert.strictEqual(vocabulary.has(probe), map.has(probe), JSON.stringify(probe))
    }
  })

  it("keeps thousands of words apart", () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${(i * 7919) % 20_000}-${i % 3}`)
    const vocabulary = new GloveVocabulary(encode(words))
    const map = mapOf(words)
    for (const word of words) assert.strictEqual(vocabulary.get(word), map.get(word))
    for (let row = 0; row < words.length; row += 997) assert.strictEqual(vocabulary.word(row), words[row])
  })

  it("drops a byte-order mark before the first word, as decoding the list did, and rejects invalid UTF-8", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encode(["the", "cat"])])
    const vocabulary = new GloveVocabulary(bytes)
    assert.deepStrictEqual(vocabulary.words(), ["the", "cat"])
    assert.strictEqual(vocabulary.get("the"), 0)
    assert.throws(() => new GloveVocabulary(new Uint8Array([0x61, 0xff, 0x0a, 0x62])))
    assert.throws(() => vocabulary.word(2))
  })
})
