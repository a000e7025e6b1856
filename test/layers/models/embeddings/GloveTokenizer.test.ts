/** Splitting text into vocabulary words: case, accents, punctuation, contractions and compounds. */
import { assert, describe, it } from "@effect/vitest"
import { tokenize } from "../../../../layers/models/embeddings/GloveTokenizer.ts"

const vocabulary = [
  "do",
  "not",
  "can",
  "will",
  "we",
  "are",
  "dog",
  "cafe",
  "well-known",
  "e-mail",
  "rock",
  "roll",
  "oneill",
  "2"
]
const index = new Map(vocabulary.map((word, row) => [word, row]))
const words = (text: string) => tokenize(text, index).map((row) => vocabulary[row])

describe("GloveTokenizer", () => {
  it("lowercases, folds accents and drops punctuation and unknown words", () => {
    assert.deepStrictEqual(words("The DOG, at the Café!"), ["dog", "cafe"])
  })

  it("expands contractions into the words the vocabulary holds", () => {
    assert.deepStrictEqual(words("We don't"), ["we", "do", "not"])
    assert.deepStrictEqual(words("we can't, we won\u2019t"), ["we", "can", "not", "we", "will", "not"])
    assert.deepStrictEqual(words("we're the dog's"), ["we", "are", "dog"])
  })

  it("keeps known compounds and names whole, and splits the others", () => {
    assert.deepStrictEqual(words("a well-known e-mail"), ["well-known", "e-mail"])
    assert.deepStrictEqual(words("dog-cafe"), ["dog", "cafe"])
    assert.deepStrictEqual(words("O'Neill likes rock'n'roll"), ["oneill", "rock", "roll"])
  })

  it("yields nothing for empty or unknown text", () => {
    assert.deepStrictEqual(words(""), [])
    assert.deepStrictEqual(words("xyzzy 123 !!"), [])
  })
})
