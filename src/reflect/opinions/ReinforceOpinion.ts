/**
 * `reinforce_opinion`: after a retain adds facts to a bank that holds opinions, each opinion is weighed against
 * the newer facts closest to it. A fact that supports it raises its confidence, one that contradicts it lowers it
 * (contradictions weigh more: a belief should be quicker to doubt than to harden). The model judges the stance when
 * one is configured; offline, only near-identical statements count, by whether their negations agree. Each
 * opinion's watermark moves with its confidence, so a re-run or a later run never weighs a fact twice.
 */
import { Effect, Schema } from "effect"
import { BankEvents } from "../../events/BankEvents.ts"
import { linkPolicy } from "../../memory/retain/MemoryLinks.ts"
import { Llm } from "../../models/Llm.ts"
import { Operations } from "../../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { clampConfidence } from "./FormOpinion.ts"
import type { OpinionRow, RelatedFact } from "./OpinionStore.ts"
import { OpinionStore } from "./OpinionStore.ts"

export type Stance = "supports" | "contradicts" | "unrelated"

/** Facts weighed per opinion and run, and how close (cosine) a fact must be to be weighed at all. */
const factsPerOpinion = 8
const offlineStanceSimilarity = 0.8

/** Confidence moves a share of the way towards 1 on support and towards 0 on contradiction. */
export const confidenceStep = { support: 0.1, contradiction: 0.2 }

export const adjustConfidence = (confidence: number, stances: ReadonlyArray<Stance>) =>
  clampConfidence(stances.reduce((value, stance) =>
    stance === "supports"
      ? value + (1 - value) * confidenceStep.support
      : stance === "contradicts"
      ? value - value * confidenceStep.contradiction
      : value, confidence))

const negations = /\b(not|no|never|none|nobody|nothing|neither|nor|cannot|without|stopped|quit|no longer)\b|n't\b/gi

/** Offline stance: only a near restatement counts, and it contradicts when exactly one side is negated. */
export const offlineStance = (opinion: string, fact: RelatedFact): Stance => {
  if (fact.similarity < offlineStanceSimilarity) return "unrelated"
  const negated = (text: string) => (text.match(negations)?.length ?? 0) % 2 === 1
  return negated(opinion) === negated(fact.text) ? "supports" : "contradicts"
}

const Judgement = Schema.Struct({
  stances: Schema.Array(Schema.Struct({
    fact: Schema.Int,
    stance: Schema.Literals(["supports", "contradicts", "unrelated"])
  }))
})

const judgePrompt = (opinion: OpinionRow, facts: ReadonlyArray<RelatedFact>) =>
  [
    `The memory bank holds this opinion: "${opinion.text}"`,
    "New facts were retained since it was last checked:",
    ...facts.map((fact, index) => `${index + 1}. ${fact.text}`),
    "For each fact, say whether it supports the opinion, contradicts it, or is unrelated to it.",
    "Answer with JSON: {\"stances\": [{\"fact\": 1, \"stance\": \"supports\"}]}."
  ].join("\n")

export const ReinforceOpinionTask = TaskRegistry.handler(
  "reinforce_opinion",
  Effect.gen(function*() {
    const llm = yield* Llm
    const store = yield* OpinionStore

    const judge = (bankId: string, operationId: string, opinion: OpinionRow, facts: ReadonlyArray<RelatedFact>) =>
      llm.available("reflect")
        ? Effect.map(
          llm.generateObject({
            purpose: "reflect",
            scope: "reflect.reinforce_opinion",
            bankId,
            operationId,
            objectName: "stances",
            schema: Judgement,
            messages: [{ role: "user", content: judgePrompt(opinion, facts) }]
          }),
          ({ value }) =>
            facts.map((_, index): Stance =>
              value.stances.find((entry) => entry.fact === index + 1)?.stance ?? "unrelated"
            )
        )
        : Effect.succeed(facts.map((fact) => offlineStance(opinion.text, fact)))

    return (operation) =>
      Effect.gen(function*() {
        const bankId = operation.bankId
        const latest = yield* store.latestFactSeq(bankId)
        const opinions = (yield* store.list(bankId)).filter((opinion) => opinion.reinforcedSeq < latest)
        const adjusted: Array<Record<string, unknown>> = []
        for (const opinion of opinions) {
          const related =
            (yield* store.relatedFacts(bankId, opinion.id, opinion.reinforcedSeq, latest, factsPerOpinion))
              .filter((fact) => fact.similarity >= linkPolicy.semanticThreshold)
          const stances = related.length === 0 ? [] : yield* judge(bankId, operation.id, opinion, related)
          const confidence = adjustConfidence(opinion.confidence, stances)
          const moved = yield* store.reinforce(opinion.id, opinion.reinforcedSeq, latest, confidence)
          const supporting = related.filter((_, index) => stances[index] === "supports").map((fact) => fact.id)
          const contradicting = related.filter((_, index) => stances[index] === "contradicts").map((fact) => fact.id)
          if (moved && (supporting.length > 0 || contradicting.length > 0)) {
            adjusted.push({
              id: opinion.id,
              text: opinion.text,
              confidence_before: opinion.confidence,
              confidence_after: confidence,
              supporting_fact_ids: supporting,
              contradicting_fact_ids: contradicting
            })
          }
        }
        return { opinions_checked: opinions.length, adjusted }
      }).pipe(
        Effect.catchTag(
          "LlmError",
          (error) =>
            Effect.fail(
              new TaskFailure({ message: `weighing opinions failed: ${error.message}`, retryable: error.retryable })
            )
        )
      )
  })
)

/**
 * Queues `reinforce_opinion` when a retain added facts to a bank that holds opinions. One pending run per bank is
 * enough: it weighs every fact newer than each opinion's watermark, however many retains came before it ran.
 */
export const ReinforceAfterRetain = BankEvents.listener(Effect.gen(function*() {
  const store = yield* OpinionStore
  const operations = yield* Operations
  return (event) => {
    if (event.type !== "retain.completed" || event.data["memories_created"] === 0) return Effect.void
    return Effect.gen(function*() {
      if (!(yield* store.hasOpinions(event.bankId))) return
      const pending = yield* operations.list(event.bankId, {
        status: "pending",
        taskType: "reinforce_opinion",
        limit: 1,
        offset: 0
      })
      if (pending.total > 0) return
      yield* operations.submit({
        bankId: event.bankId,
        taskType: "reinforce_opinion",
        payload: { after_event: event.eventId }
      })
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("queueing reinforce_opinion failed", cause)))
  }
}))
