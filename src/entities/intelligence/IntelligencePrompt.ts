/**
 * Entity intelligence with the configured language model. Full mode writes the whole document from the entity
 * map; delta mode (when a previous document exists) asks only for section edits against it and applies them
 * here, so an unchanged part of the document stays word for word. Both answer structured JSON.
 */
import { Effect, Schema } from "effect"
import type { LlmError, LlmUsage } from "../../models/Llm.ts"
import { Llm } from "../../models/Llm.ts"
import type { EntityContext } from "./EntityMap.ts"
import { Block, Section, StructuredDocument } from "./IntelligenceDocument.ts"

export const promptVersion = "v1-entity-map"
/** A bank-level written report, like reflect's answers: it uses the reflect model. */
export const intelligencePurpose = "reflect" as const
export const suggestedSections = [
  "digital-person",
  "people-circles",
  "operating-system",
  "relationship-graph",
  "current-states",
  "mind-map",
  "risks-and-blind-spots",
  "forward-possibilities",
  "what-to-watch-next"
]

export const fullSystemPrompt = [
  "You write a map of the world a memory bank describes: the person or agent at its centre, the people around them,",
  "the organisations, projects, tools and places they deal with, how these connect, what state each is in now and",
  "what is likely next. You get an inventory computed from the bank: entities with category, circle, mention",
  "count, first and last seen, current state and forecast where known, latest facts, relationships (entities named",
  "in the same facts) and open anomalies.",
  "Use only what the inventory says. Do not invent people, events or states; when the evidence is thin, say so.",
  "Write plainly, for someone who needs to act on it. Name entities exactly as the inventory does.",
  "Answer with JSON only: {\"version\": 1, \"sections\": [{\"id\": \"kebab-id\", \"heading\": \"...\", \"level\": 2, " +
  "\"blocks\": [{\"type\": \"paragraph\", \"text\": \"...\"} or {\"type\": \"bullet_list\", \"items\": [\"...\"]}]}]}."
].join("\n")

export const fullUserPrompt = (context: EntityContext) =>
  [
    `Suggested section ids, in order (leave out any the inventory cannot support): ${suggestedSections.join(", ")}.`,
    "Inventory (JSON):",
    JSON.stringify(context)
  ].join("\n")

export const DeltaOperation = Schema.Union([
  Schema.Struct({ op: Schema.Literal("replace_section"), section: Section }),
  Schema.Struct({ op: Schema.Literal("add_section"), section: Section, after: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ op: Schema.Literal("remove_section"), id: Schema.String }),
  Schema.Struct({ op: Schema.Literal("append_block"), section_id: Schema.String, block: Block })
])
export type DeltaOperation = typeof DeltaOperation.Type
export const DeltaAnswer = Schema.Struct({ operations: Schema.Array(DeltaOperation) })

export const deltaSystemPrompt = [
  "You maintain a map of the world a memory bank describes, as a JSON document of sections.",
  "You get the current document and the bank's current inventory. Change the document only where the inventory",
  "now says something different or new: a new person or organisation, a changed state, a new connection, a resolved",
  "or new anomaly. Leave every other section exactly as it is. Use only what the inventory says.",
  "Answer with JSON only: {\"operations\": [...]} where each operation is one of",
  "{\"op\": \"replace_section\", \"section\": {...}}, {\"op\": \"add_section\", \"section\": {...}, \"after\": \"section-id\"},",
  "{\"op\": \"remove_section\", \"id\": \"section-id\"}, {\"op\": \"append_block\", \"section_id\": \"...\", \"block\": {...}}.",
  "Sections are {\"id\", \"heading\", \"level\", \"blocks\"}; blocks are {\"type\": \"paragraph\", \"text\"} or",
  "{\"type\": \"bullet_list\", \"items\": [...]}. An empty list of operations means nothing changed."
].join("\n")

export const deltaUserPrompt = (current: StructuredDocument, context: EntityContext) =>
  ["Current document (JSON):", JSON.stringify(current), "Current inventory (JSON):", JSON.stringify(context)].join("\n")

/** Applies the edits in order; an edit naming a section that does not exist is reported, not guessed at. */
export const applyDelta = (document: StructuredDocument, operations: ReadonlyArray<DeltaOperation>) => {
  const sections = [...document.sections]
  const skipped: Array<string> = []
  const indexOf = (id: string) => sections.findIndex((section) => section.id === id)
  for (const operation of operations) {
    if (operation.op === "replace_section") {
      const index = indexOf(operation.section.id)
      if (index < 0) sections.push(operation.section)
      else sections[index] = operation.section
    } else if (operation.op === "add_section") {
      if (indexOf(operation.section.id) >= 0) {
        skipped.push(`add_section ${operation.section.id}: exists`)
        continue
      }
      const after = operation.after === undefined ? -1 : indexOf(operation.after)
      sections.splice(after < 0 ? sections.length : after + 1, 0, operation.section)
    } else if (operation.op === "remove_section") {
      const index = indexOf(operation.id)
      if (index < 0) skipped.push(`remove_section ${operation.id}: not found`)
      else sections.splice(index, 1)
    } else {
      const index = indexOf(operation.section_id)
      if (index < 0) skipped.push(`append_block ${operation.section_id}: not found`)
      else sections[index] = { ...sections[index]!, blocks: [...sections[index]!.blocks, operation.block] }
    }
  }
  return {
    document: { version: 1, sections } satisfies StructuredDocument,
    applied: operations.length - skipped.length,
    skipped
  }
}

const common = (bankId: string, operationId: string) => ({
  purpose: intelligencePurpose,
  bankId,
  operationId,
  maxOutputTokens: 4096
})

export const writeFull = Effect.fn("EntityIntelligence.writeFull")(function*(
  bankId: string,
  operationId: string,
  context: EntityContext
): Effect.fn.Return<{ readonly document: StructuredDocument; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    ...common(bankId, operationId),
    scope: "entity_intelligence.full",
    objectName: "entity_map_document",
    schema: StructuredDocument,
    temperature: 0.25,
    messages: [{ role: "system", content: fullSystemPrompt }, { role: "user", content: fullUserPrompt(context) }]
  })
  return { document: { version: 1, sections: value.sections }, usage }
})

export const writeDelta = Effect.fn("EntityIntelligence.writeDelta")(function*(
  bankId: string,
  operationId: string,
  current: StructuredDocument,
  context: EntityContext
): Effect.fn.Return<{ readonly operations: ReadonlyArray<DeltaOperation>; readonly usage: LlmUsage }, LlmError, Llm> {
  const llm = yield* Llm
  const { value, usage } = yield* llm.generateObject({
    ...common(bankId, operationId),
    scope: "entity_intelligence.delta",
    objectName: "entity_map_edits",
    schema: DeltaAnswer,
    temperature: 0.2,
    messages: [{ role: "system", content: deltaSystemPrompt }, {
      role: "user",
      content: deltaUserPrompt(current, context)
    }]
  })
  return { operations: value.operations, usage }
})
