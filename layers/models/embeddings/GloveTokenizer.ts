/**
 * Splits text into the words of the GloVe vocabulary: accents folded, lowercased, split on anything that is not
 * a letter or digit, with English contractions expanded into the words the vocabulary has ("don't" → do not,
 * "we'll" → we will) because the package's vocabulary holds no clitics. It only looks words up; it never
 * invents vectors for unknown words.
 */
import type { WordIndex } from "./GloveVocabulary.ts"

const TOKEN = /[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu
const COMBINING_MARKS = /\p{M}+/gu
const APOSTROPHES = /[\u2018\u2019\u02bc\u2032\uff07]/g

/** Negated auxiliaries whose stem is not the word before "n't". */
const NEGATION_STEMS: Readonly<Record<string, string>> = { ca: "can", wo: "will", sha: "shall", ai: "is" }

/** Clitics as the words they stand for; `'s` (possessive or "is") is dropped as carrying no content. */
const CLITICS: Readonly<Record<string, ReadonlyArray<string>>> = {
  re: ["are"],
  m: ["am"],
  ll: ["will"],
  ve: ["have"],
  d: ["would"],
  s: []
}

/** Lowercases, folds accents (café → cafe) and unifies apostrophes. */
export const normalise = (text: string): string =>
  text.normalize("NFKD").replace(COMBINING_MARKS, "").toLowerCase().replace(APOSTROPHES, "'")

/** The vocabulary rows of the known words of `text`, in order; unknown words are skipped. */
export const tokenize = (text: string, index: WordIndex): Array<number> => {
  const rows: Array<number> = []
  const add = (word: string) => {
    const row = index.get(word)
    if (row !== undefined) rows.push(row)
  }
  for (const match of normalise(text).matchAll(TOKEN)) {
    const token = match[0]
    const whole = index.get(token)
    if (whole !== undefined) rows.push(whole)
    else for (const part of token.split("-")) splitContraction(part, index).forEach(add)
  }
  return rows
}

const splitContraction = (word: string, index: WordIndex): ReadonlyArray<string> => {
  if (!word.includes("'")) return [word]
  if (word.endsWith("n't")) {
    const stem = word.slice(0, -3)
    return [NEGATION_STEMS[stem] ?? stem, "not"]
  }
  const apostrophe = word.lastIndexOf("'")
  const clitic = CLITICS[word.slice(apostrophe + 1)]
  if (clitic !== undefined) return [...splitContraction(word.slice(0, apostrophe), index), ...clitic]
  // Names and elisions (o'neill, rock'n'roll): the joined spelling when the vocabulary has it, else the parts.
  const joined = word.replaceAll("'", "")
  return index.has(joined) ? [joined] : word.split("'")
}
