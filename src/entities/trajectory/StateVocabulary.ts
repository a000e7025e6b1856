/**
 * The state vocabulary from the configured language model: one structured call per entity that names a few
 * discrete states the entity moves through and labels each fact, oldest first, with one of them. The answer is
 * normalised (StateLabelling) and only seeds the deterministic model; it never decides the reported path alone.
 */
import { Effect, Schema } from "effect"
import type { LlmError, LlmUsage } from "../../models/Llm.ts"
import { Llm } from "../../models/Llm.ts"
import { maxStates, normalizeLabelling, type StateLabelling } from "./StateLabelling.ts"

export const promptVersion = "v1"
/** Labelling is background interpretation of stored facts, like consolidation, so it uses that model. */
export const labellingPurpose = "consolidation" as const

export const LabellingAnswer = Schema.Struct({
  state_vocabulary: Schema.Array(Schema.String),
  labels: Schema.Array(Schema.String)
})

const factChars = 1200

export const systemPrompt = [
  "You describe how one entity (a person, organisation, project or thing) changes over time.",
  "You get the facts a memory bank holds about the entity, oldest first. Name a short ordered set of 2 to 12 " +
  "discrete states the entity passes through, as SCREAMING_SNAKE tokens (for example EXPLORING, EMPLOYED_AT_ACME, " +
  "ON_LEAVE), and give every fact exactly one of those states, seen from the entity's point of view.",
  "Prefer states that describe a lasting situation over one-off events, and reuse a state when the entity returns " +
  "to it. Keep the progression plausible.",
  `Answer with JSON only: {"state_vocabulary": ["STATE", ...], "labels": ["STATE", ...]} with at most ${maxStates} ` +
  "states and exactly one label per fact, in the order of the facts."
].join("\n\n")

export const userPrompt = (
  entityName: string,
  priorVocabulary: ReadonlyArray<string>,
  facts: ReadonlyArray<{ readonly text: string; readonly factType: string; readonly sortAt: Date }>
) =>
  [
    `Entity: ${entityName}`,
    priorVocabulary.length === 0
      ? ""
      : `States used for this entity before (reuse them while they still fit, add new ones when they do not): ${
        JSON.stringify(priorVocabulary)
      }`,
    `Facts, oldest first (${facts.length}):`,
    facts.map((fact, index) =>
      `${index + 1}. [${fact.sortAt.toISOString().slice(0, 10)}, ${fact.factType}] ${fact.text.slice(0, factChars)}`
    ).join("\n")
  ].filter((line) => line !== "").join("\n")

export const labelWithLlm = Effect.fn("StateVocabulary.labelWithLlm")(function*(options: {
  readonly bankId: string
  readonly operationId: string
  readonly entityName: string
  readonly priorVocabulary: ReadonlyArray<string>
  readonly facts: ReadonlyArray<{ readonly text: string; readonly factType: string; readonly sortAt: Date }>
}): Effect.fn.Return<{ readonly labelling: StateLabelling; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    purpose: labellingPurpose,
    scope: "entity_trajectory.label",
    bankId: options.bankId,
    operationId: options.operationId,
    objectName: "entity_state_labels",
    schema: LabellingAnswer,
    temperature: 0.2,
    maxOutputTokens: 4096,
    messages: [
      { role: "system", content: systemPrompt },
      { role: "user", content: userPrompt(options.entityName, options.priorVocabulary, options.facts) }
    ]
  })
  return {
    labelling: normalizeLabelling({ vocabulary: value.state_vocabulary, labels: value.labels }, options.facts.length),
    usage
  }
})
