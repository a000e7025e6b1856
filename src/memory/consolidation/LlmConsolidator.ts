/**
 * Consolidation with the configured language model: one call per batch of facts and scope, showing the new facts
 * and the scope's related observations under short handles (F1, O1 — models copy those reliably, unlike UUIDs),
 * and asking for JSON creates and updates. The prompt carries the built-in rules, or the bank's
 * `observations_mission` instead of them, plus the bank's mission and disposition. Answers are checked: handles
 * that were not shown are dropped, and a create or update must rest on at least one new fact or observation.
 */
import { Effect, Schema } from "effect"
import type { DispositionTraits } from "../../domain/Bank.ts"
import type { LlmError, LlmUsage } from "../../models/Llm.ts"
import { Llm } from "../../models/Llm.ts"
import type { ConsolidationFact, ObservationDraft, StoredObservation } from "./ConsolidationFact.ts"
import { union } from "./ConsolidationFact.ts"
import type { Scope } from "./ObservationScopes.ts"

export const ConsolidationAnswer = Schema.Struct({
  creates: Schema.optionalKey(Schema.Array(Schema.Struct({
    text: Schema.String,
    facts: Schema.Array(Schema.String)
  }))),
  updates: Schema.optionalKey(Schema.Array(Schema.Struct({
    observation: Schema.String,
    text: Schema.String,
    facts: Schema.optionalKey(Schema.Array(Schema.String))
  })))
})

export const builtInRules = [
  "Observations are durable, specific knowledge: preferences, skills, relationships, habits, plans, lasting states " +
  "and recurring patterns of the people, places and things in the facts. Greetings, small talk and passing " +
  "remarks are not observations.",
  "Keep names, places, numbers and dates exactly; never turn facts into advice or generalities.",
  "One observation per subject and topic; never mix facts about different people in one observation.",
  "When new facts repeat or refine an existing observation, UPDATE it (rewrite its text to include the new " +
  "detail) rather than creating another one.",
  "When new facts contradict an existing observation, update it to describe the change (\"used to …, now …\").",
  "A fact that adds nothing durable may be left out."
]

export interface BankGuidance {
  readonly observationsMission: string | null
  readonly mission: string | null
  readonly disposition: DispositionTraits
}

const dispositionLines = (traits: DispositionTraits): Array<string> =>
  [
    traits.skepticism >= 4
      ? "Be skeptical: when facts conflict or rest on hearsay, say so in the observation instead of asserting it."
      : traits.skepticism <= 2
      ? "Take the facts at face value."
      : "",
    traits.literalism >= 4
      ? "Stay literal: record only what the facts state; do not infer motives or generalise."
      : traits.literalism <= 2
      ? "You may state reasonable inferences that the facts clearly support."
      : "",
    traits.empathy >= 4
      ? "Keep the feelings and emotional context the facts express."
      : traits.empathy <= 2
      ? "Leave feelings out; record facts and states."
      : ""
  ].filter((line) => line !== "")

export const systemPrompt = (guidance: BankGuidance) =>
  [
    "You consolidate facts from a long-term memory bank into observations.",
    guidance.observationsMission
      ? `Rules for this bank's observations:\n${guidance.observationsMission}`
      : `Rules:\n${builtInRules.map((rule) => `- ${rule}`).join("\n")}`,
    guidance.mission ? `What this memory bank is for: ${guidance.mission}` : "",
    ...dispositionLines(guidance.disposition),
    "Answer with JSON only: {\"creates\": [{\"text\": \"...\", \"facts\": [\"F1\"]}], " +
    "\"updates\": [{\"observation\": \"O1\", \"text\": \"...\", \"facts\": [\"F2\"]}]}. `facts` lists the NEW FACTS " +
    "(by handle) an observation rests on; `observation` is the handle of an EXISTING OBSERVATION; each text is one " +
    "to three sentences that stand alone. Use empty lists when nothing should change."
  ].filter((line) => line !== "").join("\n\n")

const day = (date: Date | null) => date === null ? "undated" : date.toISOString().slice(0, 10)

export const userPrompt = (
  scope: Scope,
  facts: ReadonlyArray<ConsolidationFact>,
  observations: ReadonlyArray<StoredObservation>
) =>
  [
    `Scope: ${scope.length === 0 ? "untagged" : `tags ${scope.join(", ")}`}`,
    "EXISTING OBSERVATIONS:",
    observations.length === 0
      ? "(none)"
      : observations.map((observation, index) => `O${index + 1}: ${observation.text}`).join("\n"),
    "NEW FACTS:",
    facts.map((fact, index) => {
      const entities = fact.entities.length === 0 ? "" : ` (about: ${fact.entities.map((e) => e.name).join(", ")})`
      return `F${index + 1} [${day(fact.occurredStart ?? fact.mentionedAt)}, ${fact.factType}] ${fact.text}${entities}`
    }).join("\n")
  ].join("\n")

const handleIndex = (handle: string, prefix: "F" | "O", size: number): number | undefined => {
  const match = handle.trim().toUpperCase().match(new RegExp(`^${prefix}(\\d+)$`))
  const index = match ? Number(match[1]) - 1 : -1
  return index >= 0 && index < size ? index : undefined
}

export const planWithLlm = Effect.fn("LlmConsolidator.plan")(function*(options: {
  readonly bankId: string
  readonly operationId: string | null
  readonly scope: Scope
  readonly facts: ReadonlyArray<ConsolidationFact>
  readonly observations: ReadonlyArray<StoredObservation>
  readonly guidance: BankGuidance
}): Effect.fn.Return<{ readonly drafts: Array<ObservationDraft>; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    purpose: "consolidation",
    scope: "consolidation.observations",
    bankId: options.bankId,
    operationId: options.operationId ?? undefined,
    objectName: "observation_changes",
    schema: ConsolidationAnswer,
    messages: [
      { role: "system", content: systemPrompt(options.guidance) },
      { role: "user", content: userPrompt(options.scope, options.facts, options.observations) }
    ]
  })
  const factIds = (handles: ReadonlyArray<string> | undefined) => [
    ...new Set(
      (handles ?? []).map((handle) => handleIndex(handle, "F", options.facts.length))
        .filter((index) => index !== undefined).map((index) => options.facts[index]!.id)
    )
  ]

  // Several updates of one observation become one: the last text, every fact.
  const updates = new Map<string, ObservationDraft>()
  for (const update of value.updates ?? []) {
    const text = update.text.trim()
    const index = handleIndex(update.observation, "O", options.observations.length)
    if (text === "" || index === undefined) continue
    const target = options.observations[index]!
    const added = factIds(update.facts)
    const before = updates.get(target.id)
    updates.set(target.id, {
      targetId: target.id,
      scope: options.scope,
      text,
      key: target.key,
      sourceFactIds: union(before?.sourceFactIds ?? target.sourceFactIds, added),
      addedFactIds: union(before?.addedFactIds ?? [], added),
      change: "updated",
      previousText: target.text,
      absorbedIds: []
    })
  }
  const creates = (value.creates ?? []).flatMap((create): Array<ObservationDraft> => {
    const text = create.text.trim()
    const sources = factIds(create.facts)
    return text === "" || sources.length === 0 ? [] : [{
      targetId: null,
      scope: options.scope,
      text,
      key: null,
      sourceFactIds: sources,
      addedFactIds: sources,
      change: "created",
      previousText: null,
      absorbedIds: []
    }]
  })
  return { drafts: [...updates.values(), ...creates], usage }
})
