/**
 * A delta refresh: the language model edits the current document only where facts learned since the last
 * refresh contradict it, outdate it or add to what the source query asks, and keeps every other line as it is.
 * It never sees the rest of the bank, so a delta cannot drift the way a full regeneration may.
 */
import { Effect, Schema } from "effect"
import { Llm } from "../models/Llm.ts"
import type { NewFact } from "./NewFacts.ts"

const DeltaAnswer = Schema.Struct({
  content: Schema.String,
  changes: Schema.Array(Schema.String)
})

export interface DeltaInput {
  readonly bankId: string
  readonly operationId: string
  readonly sourceQuery: string
  readonly content: string
  readonly facts: ReadonlyArray<NewFact>
  readonly maxTokens: number
}

const day = (date: Date | null) => date === null ? null : date.toISOString().slice(0, 10)

const factLine = (fact: NewFact, index: number) => {
  const when = day(fact.occurredStart) ?? day(fact.mentionedAt)
  return `[${index + 1}] (${fact.type}${when === null ? "" : `, ${when}`}) ${fact.text}`
}

const instructions = (maxTokens: number) =>
  [
    "You maintain a mental model: a markdown document that answers a standing question from an agent's memory bank.",
    "You receive the current document and the facts the bank learned since the document was last written.",
    "Edit the document only where a new fact contradicts it, makes part of it out of date, or adds something the",
    "question asks about. Keep every other sentence, heading and list item exactly as it is; do not rephrase, reorder",
    "or restyle anything you are not correcting, and do not drop information no new fact contradicts.",
    `Keep the document under about ${maxTokens} tokens.`,
    "Answer with JSON: {\"content\": the whole updated document, \"changes\": one short line per edit you made}.",
    "When no new fact matters, return the document unchanged and an empty changes list."
  ].join("\n")

/** Returns the edited document and the model's list of edits; fails with the language model's error. */
export const editByDelta = Effect.fn("MentalModels.deltaEdit")(function*(input: DeltaInput) {
  const llm = yield* Llm
  const prompt = [
    `Question: ${input.sourceQuery}`,
    "",
    "Current document:",
    "<document>",
    input.content,
    "</document>",
    "",
    `New facts (${input.facts.length}):`,
    ...input.facts.map(factLine)
  ].join("\n")
  const answer = yield* llm.generateObject({
    purpose: "reflect",
    scope: "mental_model.delta",
    bankId: input.bankId,
    operationId: input.operationId,
    messages: [
      { role: "system", content: instructions(input.maxTokens) },
      { role: "user", content: prompt }
    ],
    // Room for the whole document plus the JSON around it and the list of edits.
    maxOutputTokens: input.maxTokens + 512,
    temperature: 0,
    schema: DeltaAnswer,
    objectName: "mental_model_delta"
  })
  return { content: answer.value.content.trim(), changes: answer.value.changes, usage: answer.usage }
})
