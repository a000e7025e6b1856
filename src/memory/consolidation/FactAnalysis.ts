/**
 * What the offline consolidator reads from one fact, with no language model: whom it is about (the speaker of a
 * conversation turn, else the first person named), a compact third-person clause without greetings, questions or
 * filler ("Caroline: I went there yesterday. [yesterday: 7 May 2023]" → "went there yesterday (7 May 2023)"), and
 * the nouns it is about (wink-nlp part-of-speech tags and lemmas). Deterministic and free of I/O.
 */
import type { ConsolidationFact } from "./ConsolidationFact.ts"
import { wink } from "../Wink.ts"

const its = wink.its

export interface Topic {
  /** Lemma of the head noun: the grouping key ("group"). */
  readonly head: string
  /** The noun phrase ending in it, at most two words ("support group", "Paris"): the label. */
  readonly phrase: string
  /** 1 for the head of its noun phrase ("group" in "support group"), less for a modifier ("support"). */
  readonly weight: number
}

/** A modifier can still name the topic ("cello" in "cello teacher") when the subject's facts share it. */
const modifierWeight = 0.4

export interface AnalyzedFact {
  readonly id: string
  readonly subjectId: string | null
  readonly subjectName: string | null
  /** Null when the fact says nothing durable (greetings, questions, filler). */
  readonly clause: string | null
  readonly topics: ReadonlyArray<Topic>
  readonly time: number
  readonly seq: number
}

const speakerPrefix = /^([A-Z][\p{L}'.-]*(?:\s[A-Z][\p{L}'.-]*){0,3}):\s+(.+)$/su
const dateNotes = /\s\[([^\]]*)\]$/u

/** Words that carry no durable content in conversation: greetings, reactions, politeness. */
const filler = new Set([
  "hey",
  "hi",
  "hello",
  "wow",
  "oh",
  "yeah",
  "yes",
  "yep",
  "no",
  "ok",
  "okay",
  "thanks",
  "thank",
  "lol",
  "haha",
  "omg",
  "cool",
  "awesome",
  "great",
  "good",
  "nice",
  "sweet",
  "amazing",
  "totally",
  "agree",
  "really",
  "glad",
  "sure",
  "congrats",
  "congratulations",
  "bye",
  "soon",
  "see",
  "talk",
  "well",
  "gonna",
  "wanna",
  "kinda",
  "lot",
  "pretty",
  "awww",
  "aww",
  "super",
  "definitely",
  "absolutely",
  "true",
  "right",
  "hear",
  "happy",
  "love",
  "fun",
  "stuff",
  "sound",
  "seem",
  "look",
  "glad"
])

/** Nouns too general to name a topic. */
const generic = new Set([
  "thing",
  "stuff",
  "time",
  "day",
  "week",
  "month",
  "year",
  "today",
  "yesterday",
  "tomorrow",
  "tonight",
  "lot",
  "way",
  "kind",
  "bit",
  "people",
  "person",
  "guy",
  "one",
  "something",
  "anything",
  "everything",
  "nothing",
  "bunch",
  "moment",
  "life",
  "world",
  "part",
  "fact",
  "sort",
  "type",
  "idea",
  "reason",
  "place",
  "end",
  "couple",
  "piece",
  "side",
  "point",
  "matter",
  "friend",
  "morning",
  "evening",
  "night",
  "weekend",
  "minute",
  "hour",
  "line",
  "start"
])

const leadingInterjection =
  /^(?:(?:hey|hi|hello|wow|oh|yeah|yes|yep|well|ok|okay|so|aw+|haha|lol|omg|long time no (?:see|talk))\b[\s,!.]*)+/iu

const secondPerson = /\b(?:you|your|you're|you've|yours|yourself|y'all|ya)\b/iu
const firstPersonWords = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b/iu

/** Base-form verbs that follow "I" often enough to be worth agreeing with a third-person subject. */
const verbs = new Set([
  "want",
  "love",
  "like",
  "need",
  "know",
  "think",
  "feel",
  "hope",
  "miss",
  "guess",
  "have",
  "do",
  "go",
  "get",
  "make",
  "take",
  "see",
  "try",
  "plan",
  "enjoy",
  "believe",
  "mean",
  "wish",
  "remember",
  "appreciate",
  "agree",
  "work",
  "live",
  "play",
  "paint",
  "read",
  "run",
  "teach",
  "study",
  "cherish",
  "look",
  "find",
  "say",
  "keep",
  "volunteer",
  "care",
  "practice",
  "learn",
  "start",
  "write",
  "cook",
  "walk",
  "visit",
  "watch",
  "listen",
  "use",
  "own",
  "prefer",
  "hate",
  "collect",
  "train",
  "swim",
  "dance",
  "sing",
  "draw",
  "spend",
  "struggle",
  "admire",
  "support",
  "help",
  "build"
])

const thirdForm = (verb: string) =>
  verb === "have" ? "has" : verb === "do" ? "does" : verb === "go" ? "goes" : verb === "say" ?
    "says"
    : /[^aeiou]y$/.test(verb) ?
    `${verb.slice(0, -1)}ies`
    : /(?:s|sh|ch|x|z)$/.test(verb) ?
    `${verb}es`
    : `${verb}s`

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** First person → the subject's first name, so a clause reads on its own ("my kids" → "Melanie's kids"). */
export const thirdPerson = (text: string, first: string): string =>
  text
    .replace(/\bI(?:'|’)m\b|\bI am\b/g, `${first} is`)
    .replace(/\bI(?:'|’)ve\b/g, `${first} has`)
    .replace(/\bI(?:'|’)d\b/g, `${first} would`)
    .replace(/\bI(?:'|’)ll\b/g, `${first} will`)
    .replace(/\bI (\p{Ll}+)\b/gu, (found, verb: string) => verbs.has(verb) ? `${first} ${thirdForm(verb)}` : found)
    .replace(/\bI\b/g, first)
    .replace(/\b[Mm]y\b/g, `${first}'s`)
    .replace(/\b[Mm]ine\b/g, `${first}'s`)
    .replace(/\b[Mm]yself\b/g, "themselves")
    .replace(/\bme\b/g, first)

/** "yesterday" → "yesterday (7 May 2023)", from the notes the offline extractor appends. */
const applyDateNotes = (text: string, notes: ReadonlyArray<readonly [string, string]>): string =>
  notes.reduce((out, [expression, described]) => {
    const pattern = new RegExp(`\\b${escape(expression)}\\b`, "iu")
    return pattern.test(out) && !out.includes(`(${described})`)
      ? out.replace(pattern, (found) => `${found} (${described})`)
      : out
  }, text)

const parseNotes = (note: string | undefined): Array<readonly [string, string]> =>
  (note ?? "").split("; ").map((part) => {
    const colon = part.indexOf(": ")
    return colon < 0 ? undefined : [part.slice(0, colon), part.slice(colon + 2)] as const
  }).filter((entry) => entry !== undefined)

const maxClauseWords = 35

const capWords = (text: string): string => {
  const words = text.split(/\s+/)
  return words.length <= maxClauseWords ? text : `${words.slice(0, maxClauseWords).join(" ")}…`
}

/** Where the entity is first named in the text (by its first name), or -1. */
const position = (text: string, name: string) => text.search(new RegExp(`\\b${escape(name.split(" ")[0]!)}\\b`, "iu"))

const subjectOf = (fact: ConsolidationFact, speaker: string | null) => {
  const lower = speaker?.toLowerCase()
  // Without a speaker: the person named first, else whatever entity is named first.
  const firstNamed = (people: boolean) =>
    fact.entities
      .filter((entity) => (!people || entity.type === "person") && position(fact.text, entity.name) >= 0)
      .sort((a, b) => position(fact.text, a.name) - position(fact.text, b.name))[0]
  const named = lower === undefined
    ? firstNamed(true) ?? firstNamed(false)
    : fact.entities.find((entity) => {
      const name = entity.name.toLowerCase()
      return name === lower || name.split(" ")[0] === lower
    })
  if (named !== undefined) return { id: named.id, name: named.name }
  return speaker === null ? { id: null, name: null } : { id: null, name: speaker }
}

interface Sentence {
  readonly text: string
  readonly contentWords: number
  readonly topics: Array<Topic>
  /** Said to the listener about the listener ("your painting is lovely"): not knowledge about the speaker. */
  readonly addressed: boolean
}

const closing = new Set([",", "!", ".", "?", ";"])

const tokens = (text: string) => {
  const doc = wink.readDoc(text)
  return {
    words: doc.tokens().out() as Array<string>,
    tags: doc.tokens().out(its.pos) as Array<string>,
    // The lite model lemmatises; wink's typings do not list `lemma` among token properties.
    lemmas: doc.tokens().out(its.lemma as unknown as typeof its.normal) as Array<string>,
    stop: doc.tokens().out(its.stopWordFlag) as Array<boolean>
  }
}

const readSentences = (
  body: string,
  subjectWords: ReadonlySet<string>,
  context: { readonly conversational: boolean; readonly typedNames: ReadonlySet<string> }
): Array<Sentence> =>
  (wink.readDoc(body).sentences().out() as Array<string>).map((raw) => {
    const text = raw.trim().replace(leadingInterjection, "").trim()
    const read = tokens(text)
    const words = read.words
    let { tags, lemmas, stop } = read
    // The tagger takes a capitalised first word for a name ("Painting's fun", "Loving the support"); unless the
    // fact names it as a person, place or organisation, read the sentence again with it in lower case.
    if (tags[0] === "PROPN" && !context.typedNames.has(words[0]!.toLowerCase())) {
      const again = tokens(text.charAt(0).toLowerCase() + text.slice(1))
      if (again.words.length === words.length) ({ tags, lemmas, stop } = again)
    }
    // A name said to someone ("Thanks, Mel!", "Caroline, …") names no topic.
    const vocative = (index: number) =>
      tags[index] === "PROPN" && (index === 0 || words[index - 1] === ",") &&
      (index + 1 >= words.length || closing.has(words[index + 1]!))
    const notATopic = vocative
    let contentWords = 0
    const topics: Array<Topic> = []
    let run: Array<number> = []
    const flush = () => {
      // A run's head is its last noun that can name a topic: "support group yesterday" is about the group.
      const kept = run.filter((index) => {
        const lemma = lemmas[index]!.toLowerCase()
        return !subjectWords.has(words[index]!.toLowerCase()) && lemma.length > 2 && !generic.has(lemma) &&
          !filler.has(lemma) && /^\p{L}+$/u.test(lemma)
      })
      // Proper nouns keep their case; a common noun that opened its sentence is lower-cased.
      const written = (index: number) => tags[index] === "PROPN" ? words[index]! : words[index]!.toLowerCase()
      kept.forEach((index, position) => {
        const head = position === kept.length - 1
        topics.push({
          head: lemmas[index]!.toLowerCase(),
          phrase: head ? kept.slice(-2).map(written).join(" ") : written(index),
          weight: head ? 1 : modifierWeight
        })
      })
      run = []
    }
    words.forEach((word, index) => {
      const lemma = lemmas[index]!.toLowerCase()
      if (
        /\p{L}{2,}/u.test(word) && !stop[index] && !filler.has(lemma) && !subjectWords.has(word.toLowerCase()) &&
        !vocative(index)
      ) {
        contentWords++
      }
      if ((tags[index] === "NOUN" || tags[index] === "PROPN") && !notATopic(index)) run.push(index)
      else flush()
    })
    flush()
    const addressed = context.conversational && !firstPersonWords.test(text) &&
      (secondPerson.test(text) || words.some((_, index) => vocative(index)))
    return { text, contentWords, topics, addressed }
  })

export const analyzeFact = (fact: ConsolidationFact): AnalyzedFact => {
  const noted = fact.text.match(dateNotes)
  const withoutNotes = noted ? fact.text.slice(0, noted.index) : fact.text
  const turn = withoutNotes.match(speakerPrefix)
  const speaker = turn ? turn[1]! : null
  const body = turn ? turn[2]! : withoutNotes
  const subject = subjectOf(fact, speaker)
  const subjectWords = new Set([
    ...(subject.name?.toLowerCase().split(" ") ?? []),
    ...(speaker?.toLowerCase().split(" ") ?? [])
  ])
  // Statements only: questions and reactions say nothing the bank should keep.
  const typedNames = new Set(
    fact.entities.filter((entity) => entity.type !== null)
      .flatMap((entity) => entity.name.toLowerCase().split(" "))
  )
  const kept = readSentences(body, subjectWords, { conversational: speaker !== null, typedNames }).filter((sentence) =>
    sentence.text !== "" && !sentence.text.endsWith("?") && !sentence.addressed && sentence.contentWords >= 2
  )
  const contentWords = kept.reduce((sum, sentence) => sum + sentence.contentWords, 0)
  const time = (fact.occurredStart ?? fact.mentionedAt)?.getTime() ?? 0
  const base = { id: fact.id, subjectId: subject.id, subjectName: subject.name, time, seq: fact.seq }
  if (kept.length === 0 || contentWords < 3) return { ...base, clause: null, topics: [] }

  const first = subject.name?.split(" ")[0] ?? null
  let clause = applyDateNotes(kept.map((sentence) => sentence.text).join(" "), parseNotes(noted?.[1]))
  if (first !== null && (speaker !== null || fact.factType === "experience")) clause = thirdPerson(clause, first)
  // The observation names its subject once, up front: "Melanie — painting: painted a lake sunrise …".
  for (const name of [subject.name, first]) {
    if (name !== null && clause.startsWith(`${name} `) && !clause.startsWith(`${name} 's`)) {
      clause = clause.slice(name.length + 1)
      break
    }
  }
  clause = capWords(clause.replace(/[\s.!;,]+$/u, ""))
  return { ...base, clause, topics: kept.flatMap((sentence) => sentence.topics) }
}
