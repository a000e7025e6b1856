/**
 * Reflect without a language model: a deterministic, clearly labelled summary of the evidence recall found —
 * the best match first, then the other relevant memories in time order, observations and mental models — with
 * near-duplicates folded. It never pretends to reason: the label says what it is. Also used when the model does
 * not answer within the reflect's time budget.
 */
import { wordJaccard } from "../memory/retain/ContentHash.ts"
import type { Evidence, EvidenceMemory, EvidenceModel } from "./Evidence.ts"
import { memoryDate } from "./Evidence.ts"

/** How many memories each section lists: enough to answer from, few enough to read. */
const limits = { facts: 6, observations: 3, models: 3 }
const duplicateOverlap = 0.8

export const offlineLabel = "**Offline answer** — no language model is configured, so this is a deterministic " +
  "summary of the memories most relevant to the question, not a reasoned answer."

export const timeoutLabel = (seconds: number) =>
  `**Partial answer** — the language model did not answer within this reflect's time budget (${seconds} s), so this ` +
  "is a deterministic summary of the memories found so far."

const byRelevance = (a: EvidenceMemory, b: EvidenceMemory) => b.score - a.score || a.order - b.order

/** Every word, date notes included: an observation often repeats the date the extractor noted on its fact. */
const words = (text: string) => new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])

/** Whether nearly every word of `text` is already in one of `shown`: an observation restating a listed fact. */
const restates = (text: string, shown: ReadonlyArray<EvidenceMemory>) => {
  const own = words(text)
  return shown.some((other) => {
    const theirs = words(other.text)
    let shared = 0
    for (const word of own) if (theirs.has(word)) shared++
    return own.size > 0 && shared / own.size >= duplicateOverlap
  })
}

/** Keeps the first of any memories that say nearly the same thing, and none that restate one already `shown`. */
const distinct = (memories: ReadonlyArray<EvidenceMemory>, shown: ReadonlyArray<EvidenceMemory> = []) => {
  const kept: Array<EvidenceMemory> = []
  for (const memory of memories) {
    if (kept.some((other) => wordJaccard(other.text, memory.text) >= duplicateOverlap)) continue
    if (restates(memory.text, shown)) continue
    kept.push(memory)
  }
  return kept
}

const dated = (memory: EvidenceMemory) => {
  const date = memoryDate(memory)
  return date === null ? memory.text : `${date} — ${memory.text}`
}

/** Markdown reduced to plain sentences: quoted labels dropped, emphasis and list marks removed. */
const plain = (content: string) =>
  content.split("\n")
    .filter((line) => !line.trimStart().startsWith(">"))
    .map((line) => line.replace(/^\s*(?:[-*+]|\d+\.|#+)\s+/, "").replace(/[*_`]+/g, "").trim())
    .filter((line) => line !== "")
    .map((line) => /[.!?;:]$/.test(line) ? line : `${line}.`)
    .join(" ")

/** The first sentences of a long text (a mental model, a merged observation), so the summary stays readable. */
const opening = (content: string, maxChars = 320) => {
  const flat = plain(content).replace(/\s+/g, " ").trim()
  const sentences = flat.match(/[^.!?;]+[.!?;]+/g) ?? [flat]
  let out = ""
  for (const sentence of sentences) {
    if (out !== "" && out.length + sentence.length > maxChars) break
    out += sentence
  }
  out = out.trim().replace(/;$/, ".")
  return out.length > maxChars ? `${out.slice(0, maxChars).trimEnd()}…` : out === flat ? out : `${out} …`
}

/**
 * Which fact replaced which, for every superseded memory among the evidence: the replacement's text when it was
 * found too, else its id (the memory routes show it).
 */
const replacements = (memories: ReadonlyArray<EvidenceMemory>): Array<string> => {
  const byId = new Map(memories.map((memory) => [memory.id, memory]))
  return memories.filter((memory) => memory.supersededBy !== null).map((memory) => {
    const newer = byId.get(memory.supersededBy!)
    return newer === undefined
      ? `"${memory.text}" was replaced by a newer memory (${memory.supersededBy}).`
      : `"${memory.text}" was replaced by "${dated(newer)}".`
  })
}

export interface Synthesis {
  readonly text: string
  /** The memories and mental models the text shows: what an offline answer is based on. */
  readonly memories: ReadonlyArray<EvidenceMemory>
  readonly models: ReadonlyArray<EvidenceModel>
}

export const synthesize = (
  input: { readonly question: string; readonly evidence: Evidence; readonly label: string }
): Synthesis => {
  const { evidence } = input
  const facts = distinct(
    evidence.memories.filter((m) => m.type !== "observation" && m.type !== "opinion").sort(byRelevance)
  )
    .slice(0, limits.facts)
  const observations = distinct(
    evidence.memories.filter((m) => m.type === "observation" || m.type === "opinion").sort(byRelevance),
    facts
  )
  const sections: Array<string> = [`> ${input.label}`]
  if (evidence.isEmpty) {
    sections.push(`Nothing in this bank's memories matches "${input.question}".`)
    return { text: sections.join("\n\n"), memories: [], models: [] }
  }
  const best = facts[0] ?? observations[0]
  if (best !== undefined) sections.push(`**Best match:** ${dated(best)}`)
  const others = facts.filter((memory) => memory !== best).sort((a, b) =>
    (memoryDate(a) ?? "").localeCompare(memoryDate(b) ?? "") || a.order - b.order
  )
  if (others.length > 0) {
    sections.push("**Also relevant** (oldest first):\n" + others.map((memory) => `- ${dated(memory)}`).join("\n"))
  }
  const shownObservations = observations.filter((memory) => memory !== best).slice(0, limits.observations)
  if (shownObservations.length > 0) {
    sections.push(
      "**Observations:**\n" +
        shownObservations.map((memory) =>
          `- ${opening(memory.text)}${memory.type === "opinion" ? " _(the bank's opinion)_" : ""}`
        ).join("\n")
    )
  }
  const replaced = replacements(evidence.memories)
  if (replaced.length > 0) sections.push("**Changed since:**\n" + replaced.map((line) => `- ${line}`).join("\n"))
  const models = evidence.models.slice(0, limits.models)
  if (models.length > 0) {
    sections.push(
      "**Mental models:**\n" + models.map((model) => `- **${model.name}:** ${opening(model.content)}`).join("\n")
    )
  }
  return {
    text: sections.join("\n\n"),
    memories: [...(best === undefined ? [] : [best]), ...others, ...shownObservations],
    models
  }
}
