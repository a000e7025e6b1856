/**
 * Fact extraction with the configured language model: the prompt carries the bank's retain mission, the
 * extraction mode (or the bank's custom instructions) and the content's context and time; the answer is
 * validated against a schema (the Llm service repairs and retries malformed answers).
 */
import { Effect, Schema } from "effect"
import type { LlmError, LlmUsage } from "../../models/Llm.ts"
import { Llm } from "../../models/Llm.ts"
import type { ExtractedFact, ExtractionInput } from "./ExtractedFact.ts"

const Relation = Schema.Literals(["causes", "caused_by", "enables", "prevents"])

export const ExtractionSchema = Schema.Struct({
  facts: Schema.Array(Schema.Struct({
    text: Schema.String,
    type: Schema.Literals(["world", "experience"]),
    occurred_start: Schema.optionalKey(Schema.NullOr(Schema.String)),
    occurred_end: Schema.optionalKey(Schema.NullOr(Schema.String)),
    entities: Schema.optionalKey(Schema.Array(Schema.Struct({
      name: Schema.String,
      type: Schema.optionalKey(Schema.NullOr(Schema.String))
    }))),
    causal_relations: Schema.optionalKey(Schema.Array(Schema.Struct({
      target_index: Schema.Int,
      relation: Relation
    })))
  }))
})

const modeRules = {
  concise: "Extract only the facts worth remembering later: one self-contained sentence each, no filler or greetings.",
  verbose: "Extract every fact stated or clearly implied, including details, preferences, plans and feelings; " +
    "one self-contained sentence each.",
  custom: ""
} as const

export const systemPrompt = (input: ExtractionInput) =>
  [
    "You extract durable facts from content for a long-term memory system.",
    input.mode === "custom" && input.customInstructions ? input.customInstructions : modeRules[input.mode],
    "Rules:",
    "- Each fact must stand alone: replace pronouns with names and relative times (\"yesterday\", \"last May\") with " +
    "absolute dates computed from the content's time.",
    "- type is \"experience\" for what the speaker or author did, felt or experienced first-hand, otherwise \"world\".",
    "- occurred_start/occurred_end: ISO 8601 dates of when the fact happened, if known; otherwise null.",
    "- entities: the people, places, organisations and named things the fact mentions, with type person, place, " +
    "organization, concept or other.",
    "- causal_relations: relations from this fact to an EARLIER fact in your list, by its 0-based index.",
    input.mission ? `What matters to this memory bank: ${input.mission}` : "",
    "Answer with JSON: {\"facts\": [...]}."
  ].filter((line) => line !== "").join("\n")

export const userPrompt = (input: ExtractionInput) =>
  [
    input.mentionedAt ? `Content time: ${input.mentionedAt.toISOString()}` : "Content time: unknown (timeless)",
    input.context ? `Context: ${input.context}` : "",
    "Content:",
    input.text
  ].filter((line) => line !== "").join("\n")

const parseDate = (value: string | null | undefined): Date | null => {
  if (value === null || value === undefined || value.trim() === "") return null
  const parsed = new Date(value)
  return Number.isNaN(parsed.getTime()) ? null : parsed
}

export const extractWithLlm = Effect.fn("LlmExtractor.extract")(function*(
  input: ExtractionInput,
  trace: { readonly bankId: string; readonly operationId?: string | undefined }
): Effect.fn.Return<{ readonly facts: Array<ExtractedFact>; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    purpose: "retain",
    scope: "retain.extract_facts",
    bankId: trace.bankId,
    operationId: trace.operationId,
    objectName: "extracted_facts",
    schema: ExtractionSchema,
    messages: [
      { role: "system", content: systemPrompt(input) },
      { role: "user", content: userPrompt(input) }
    ]
  })
  const facts = value.facts
    .filter((fact) => fact.text.trim() !== "")
    .map((fact, index): ExtractedFact => ({
      text: fact.text.trim(),
      factType: fact.type,
      occurredStart: parseDate(fact.occurred_start),
      occurredEnd: parseDate(fact.occurred_end) ?? parseDate(fact.occurred_start),
      entities: (fact.entities ?? [])
        .filter((entity) => entity.name.trim() !== "")
        .map((entity) => ({ name: entity.name.trim(), type: entity.type ?? null })),
      causes: (fact.causal_relations ?? [])
        .filter((relation) => relation.target_index >= 0 && relation.target_index < index)
        .map((relation) => ({ target: relation.target_index, relation: relation.relation }))
    }))
  return { facts, usage }
})
