/**
 * The facts a delta refresh weighs: memories of the model's tag scope written or changed since its last refresh.
 * When there are more than a prompt can hold, the ones recall ranks highest for the source query go first and the
 * most recent fill the rest, so a flood of unrelated facts cannot crowd out the one that contradicts the model.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Recall } from "../memory/recall/Recall.ts"
import { tagScope } from "../memory/recall/TagFilter.ts"
import type { MentalModelRecord } from "./MentalModelStore.ts"

export interface NewFact {
  readonly id: string
  readonly text: string
  readonly type: string
  readonly occurredStart: Date | null
  readonly mentionedAt: Date | null
}

/** Facts one delta prompt carries at most. */
export const maxDeltaFacts = 40

/** Memory types a mental model is built from; opinions are the bank's own views, not evidence. */
const evidenceTypes = ["world", "experience", "observation"]

/**
 * A model with tags reads only memories carrying all of them (a tagged model must not leak other scopes);
 * a model without tags reads the whole bank.
 */
export const modelTagScope = (model: Pick<MentalModelRecord, "tags">) =>
  model.tags.length === 0
    ? { tags: null, tagsMatch: "any" as const }
    : { tags: [...model.tags], tagsMatch: "all_strict" as const }

export const newFactsSince = Effect.fn("NewFacts.since")(function*(model: MentalModelRecord, since: Date) {
  const sql = yield* SqlClient.SqlClient
  const recall = yield* Recall
  const scope = modelTagScope(model)
  const rows = yield* sql<{
    id: string
    text: string
    factType: string
    occurredStart: Date | null
    mentionedAt: Date | null
  }>`
    SELECT id, text, fact_type, occurred_start, mentioned_at FROM memory_units
    WHERE bank_id = ${model.bankId} AND fact_type IN ${sql.in(evidenceTypes)}
      AND greatest(created_at, updated_at) > ${since}
      AND ${tagScope(sql, "tags", scope)}
    ORDER BY greatest(created_at, updated_at) DESC, id
    LIMIT 2000`.pipe(Effect.orDie)
  const facts = rows.map((row): NewFact => ({
    id: row.id,
    text: row.text,
    type: row.factType,
    occurredStart: row.occurredStart,
    mentionedAt: row.mentionedAt
  }))
  if (facts.length <= maxDeltaFacts) return facts

  const byId = new Map(facts.map((fact) => [fact.id, fact]))
  const ranked = yield* recall.recall(model.bankId, {
    query: model.sourceQuery,
    types: evidenceTypes as Array<"world" | "experience" | "observation">,
    budget: "high",
    max_tokens: 16_384,
    tags: scope.tags,
    tags_match: scope.tagsMatch
  }).pipe(Effect.map((response) => response.results), Effect.orElseSucceed(() => []))
  const chosen = new Map<string, NewFact>()
  for (const result of ranked) {
    const fact = byId.get(result.id)
    if (fact !== undefined && chosen.size < maxDeltaFacts) chosen.set(fact.id, fact)
  }
  for (const fact of facts) {
    if (chosen.size >= maxDeltaFacts) break
    if (!chosen.has(fact.id)) chosen.set(fact.id, fact)
  }
  return [...chosen.values()]
})
