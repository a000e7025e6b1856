/**
 * Fact extraction with no language model: sentence segmentation and part-of-speech tagging (wink-nlp), proper-
 * noun entities typed with compromise's lexicon, time expressions resolved against the item's timestamp, and
 * first-person statements as `experience`. Conversation turns ("Name: text") keep their speaker on every fact
 * and as an entity. Deterministic: the same input always gives the same facts.
 */
import { nlp } from "../Compromise.ts"
import type { ExtractedEntity, ExtractedFact, ExtractionInput } from "./ExtractedFact.ts"
import { describeWindow, resolveTimes } from "./TimeExpressions.ts"
import { wink } from "../Wink.ts"
import { runWhole, type Sliced } from "../../brain/Sliced.ts"

const its = wink.its

/** Short items stay one fact, so a conversation turn stays one memory; longer text splits into groups. */
const maxWordsPerFact = 60
const sentencesPerFact = 2

const speakerPrefix = /^([A-Z][\p{L}'.-]*(?:\s[A-Z][\p{L}'.-]*){0,3}):\s+(.+)$/su
const firstPerson = /\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b/i
const pronouns = /\b(she|he|her|him|his|hers)\b/i
const notNames = new Set([
  "i",
  "i'm",
  "i've",
  "i'd",
  "i'll",
  "hey",
  "hi",
  "hello",
  "ok",
  "okay",
  "yes",
  "no",
  "wow",
  "thanks",
  "thank",
  "good",
  "great",
  "oh",
  "god",
  "omg",
  "lol",
  "mom",
  "dad",
  "yeah",
  "sure",
  "congrats"
])

const entityTypeCache = new Map<string, string | null>()

/** person, place or organization from compromise's lexicon; null when it cannot tell. */
const entityType = (name: string): string | null => {
  const cached = entityTypeCache.get(name)
  if (cached !== undefined) return cached
  const doc = nlp(name)
  const type = doc.people().found
    ? "person"
    : doc.places().found
    ? "place"
    : doc.organizations().found
    ? "organization"
    : null
  if (entityTypeCache.size > 50_000) entityTypeCache.clear()
  entityTypeCache.set(name, type)
  return type
}

const cleanName = (name: string) => name.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").replace(/\s+/g, " ")

/** Runs of proper nouns; a lone capitalised word opening a sentence counts only if it is not a common word. */
const properNouns = (sentence: string): Array<string> => {
  const doc = wink.readDoc(sentence)
  const words = doc.tokens().out() as Array<string>
  const tags = doc.tokens().out(its.pos) as Array<string>
  const names: Array<string> = []
  let run: Array<string> = []
  let runStart = 0
  const flush = () => {
    if (run.length > 0) {
      const name = cleanName(run.join(" "))
      const single = run.length === 1
      const lower = name.toLowerCase()
      const acceptable = name.length > 1 && !notNames.has(lower) && /^\p{Lu}/u.test(name) &&
        !(single && runStart === 0 && lower === run[0]!.toLowerCase() && notNames.has(lower))
      if (acceptable) names.push(name)
    }
    run = []
  }
  words.forEach((word, index) => {
    if (tags[index] === "PROPN" && /^\p{Lu}/u.test(word)) {
      if (run.length === 0) runStart = index
      run.push(word)
    } else flush()
  })
  flush()
  return names
}

const sentencesOf = (text: string): Array<string> =>
  (wink.readDoc(text).sentences().out() as Array<string>).map((s) => s.trim()).filter((s) => s !== "")

const wordCount = (text: string) => text.split(/\s+/).filter((word) => word !== "").length

/** Groups sentences so each fact carries enough context to stand alone. */
const groupSentences = (sentences: ReadonlyArray<string>): Array<string> => {
  const all = sentences.join(" ")
  if (wordCount(all) <= maxWordsPerFact) return all === "" ? [] : [all]
  const groups: Array<string> = []
  for (let index = 0; index < sentences.length; index += sentencesPerFact) {
    groups.push(sentences.slice(index, index + sentencesPerFact).join(" "))
  }
  return groups
}

export const extractOffline = (input: ExtractionInput): Array<ExtractedFact> => runWhole(extractingOffline(input))

/**
 * `extractOffline` as work that yields after each group of sentences, for a caller that runs it in slices
 * (`runSliced`): an item's parsing (wink-nlp, compromise, chrono) held the event loop 80-170 ms in one piece in a CPU
 * profile of a server under fifty clients, cold code on a loaded machine.
 */
export function* extractingOffline(input: ExtractionInput): Sliced<Array<ExtractedFact>> {
  const facts: Array<ExtractedFact> = []
  const lines = input.text.split(/\n+/).map((line) => line.trim()).filter((line) => line !== "")
  // A transcript is a run of "Speaker: text" lines; anything else is prose.
  const speakerLines = lines.filter((line) => speakerPrefix.test(line)).length
  const segments = speakerLines > 0 && speakerLines >= lines.length / 2
    ? lines.map((line) => {
      const match = line.match(speakerPrefix)
      return match ? { speaker: match[1]!, body: match[2]! } : { speaker: null, body: line }
    })
    : [{ speaker: null, body: input.text.trim() }]
  let lastPerson: ExtractedEntity | null = null

  for (const segment of segments) {
    for (const group of groupSentences(sentencesOf(segment.body))) {
      const names = properNouns(group)
      const entities = new Map<string, ExtractedEntity>()
      if (segment.speaker !== null) {
        entities.set(segment.speaker.toLowerCase(), { name: segment.speaker, type: "person" })
      }
      for (const name of names) {
        if (!entities.has(name.toLowerCase())) entities.set(name.toLowerCase(), { name, type: entityType(name) })
      }
      const people = [...entities.values()].filter((e) => e.type === "person" && e.name !== segment.speaker)
      // "she"/"he" with no person named here refers back to the last person named in this item.
      if (people.length === 0 && pronouns.test(group) && lastPerson !== null) {
        entities.set(lastPerson.name.toLowerCase(), lastPerson)
      }
      if (people.length > 0) lastPerson = people[people.length - 1]!

      const windows = input.mentionedAt === null ? [] : resolveTimes(group, input.mentionedAt)
      const window = windows[0]
      const dated = windows.length === 0
        ? group
        : `${group} [${windows.map((w) => `${w.expression}: ${describeWindow(w)}`).join("; ")}]`
      const text = segment.speaker === null ? dated : `${segment.speaker}: ${dated}`
      facts.push({
        text,
        factType: firstPerson.test(group) ? "experience" : "world",
        occurredStart: window?.start ?? null,
        occurredEnd: window?.end ?? null,
        entities: [...entities.values()],
        causes: []
      })
      yield
    }
  }
  return facts
}
