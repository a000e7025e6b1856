/**
 * The small text measures the state surface is built from: tokens without stopwords, Jaccard overlap,
 * negation polarity, slugs and the "leading entity" of a sentence. Pure and deterministic.
 */
import { createHash } from "node:crypto"

const stopwords = new Set(
  ("a an the and or but if then of to in on at by for with from as is are was were be been being it its this that " +
    "these those he she they them his her their we our you your i me my has have had do does did so than too very " +
    "can will would should could may might must about into over after before up down out just also there here who " +
    "what which when where why how all any some each more most other such only own same")
    .split(" ")
)

/** Words that flip a statement: the reference's graph negation set. */
const negations = new Set(
  ("not no never without stopped quit left gave resigned retired ended cancelled abandoned removed deleted closed " +
    "rejected handed former ex previously").split(" ")
)

const words = (text: string) => text.toLowerCase().match(/[a-z0-9']+/g)?.map((word) => word.replace(/'s$|'/g, "")) ?? []

/** Content words: lowercased, stopwords and negations left out (so "no longer works" and "works" share "works"). */
export const contentTokens = (text: string): Set<string> =>
  new Set(words(text).filter((word) => word.length > 1 && !stopwords.has(word) && !negations.has(word)))

export const jaccard = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  if (a.size === 0 && b.size === 0) return 1
  let shared = 0
  for (const token of a) if (b.has(token)) shared++
  return shared / (a.size + b.size - shared)
}

export const overlap = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  let shared = 0
  for (const token of a) if (b.has(token)) shared++
  return shared
}

/** Whether the sentence is negated (contains a word of the negation set, or an "n't" contraction). */
export const negated = (text: string) => /n't\b/i.test(text) || words(text).some((word) => negations.has(word))

export const normalized = (text: string) => text.toLowerCase().replace(/\s+/g, " ").trim()

/** `[^a-z0-9]+` → `-`; a name with no such character gets the first 8 hex digits of its SHA-1. */
export const slug = (name: string) => {
  const value = name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "")
  return value.length > 0 ? value : createHash("sha1").update(name).digest("hex").slice(0, 8)
}

const wordCharacter = /[\p{L}\p{N}]/u
const isWordCharacter = (character: string | undefined) => character !== undefined && wordCharacter.test(character)

/** Where the name first occurs as a whole word (case-insensitive), or -1. Plain `indexOf`: no regex per name. */
export const mentionAt = (text: string, name: string, lowered = text.toLowerCase()) => {
  const needle = name.toLowerCase()
  if (needle.length === 0) return -1
  for (let at = lowered.indexOf(needle); at >= 0; at = lowered.indexOf(needle, at + 1)) {
    if (!isWordCharacter(lowered[at - 1]) && !isWordCharacter(lowered[at + needle.length])) return at
  }
  return -1
}

/** The entity the sentence is about: of its entities, the one named earliest. */
export const leadingEntity = (text: string, entities: ReadonlyArray<string>) => {
  let best: string | undefined
  let bestAt = Infinity
  const lowered = text.toLowerCase()
  for (const entity of entities) {
    const at = mentionAt(text, entity, lowered)
    if (at >= 0 && at < bestAt) {
      best = entity
      bestAt = at
    }
  }
  return best
}

export const clamp = (value: number, low = 0, high = 1) => Math.min(high, Math.max(low, value))
export const round3 = (value: number) => Math.round(value * 1000) / 1000
