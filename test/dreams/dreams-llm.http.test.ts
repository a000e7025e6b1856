/**
 * Dreams with a language model: the reflect purpose points at a scripted OpenAI-compatible server on loopback. A
 * structured answer becomes the run (evidence ids it invents are dropped, its HTML never shown); approving its
 * mental-model proposal creates a mental model and its observation proposal a recallable memory; an answer that
 * cannot be repaired, or a failing provider, yields the deterministic run; a trigger while one waits is reused;
 * and recall answers while a dream waits on a slow model (the p95 ratio target is in `bench/dreams.ts`).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { bankPath, call, ok, operationFinished } from "../support/HttpCalls.ts"
import { eventually } from "../support/TestTasks.ts"
import { onePurpose, Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const models = scriptedModels(onePurpose("reflect", "dreamer", Duration.seconds(20)))

const app = scriptedApp({ operationMaxAttempts: 1, operationRetryBase: Duration.millis(5) }, models)

const bank = bankPath
const finished = operationFinished

const facts = [
  "Priya runs the Saturday farmers market stall selling sourdough bread.",
  "Priya wants to open a small bakery in Lisbon next spring.",
  "Priya asked her bank about a loan for an oven for the bakery.",
  "Tomas helps Priya at the market stall on Saturdays.",
  "Priya's sourdough sold out at the market three weeks in a row.",
  "Tomas is saving money to study baking in Porto."
]

const seed = (id: string) =>
  Effect.gen(function*() {
    yield* ok("POST", `${bank(id)}/memories`, { items: facts.map((content) => ({ content })) })
    yield* ok("PATCH", `${bank(id)}/config`, { dream: { enabled: true, quality_threshold: 0.5 } })
  })

const answerFor = (evidenceIds: ReadonlyArray<string>) => ({
  summary: "Priya's bakery plan is firming up: steady market sales and a loan request point to an opening next spring.",
  hypotheses: ["Market demand for Priya's sourdough is stable."],
  predicted_next_events: [{
    title: "Priya applies for the oven loan",
    description: "She already asked about it; the next step is a formal application.",
    target_ref: "Priya",
    target_kind: "entity",
    horizon: "near_term",
    confidence: 0.7,
    success_criteria: ["A memory says Priya applied for or received the loan."],
    expiration_window_days: 21,
    supporting_evidence_ids: [evidenceIds[0], "invented-id"]
  }],
  predicted_state_changes: ["Priya moves from market stall to shop owner."],
  growth_hypotheses: [{
    title: "From stall to shop",
    description: "The stall is a test bed for the bakery.",
    confidence: 0.6
  }],
  risks: ["The loan may be refused."],
  opportunities: ["Tomas could join the bakery after his course."],
  recommended_validations: ["Ask Priya whether the loan application went in."],
  promotion_proposals: [
    {
      proposal_type: "mental_model",
      title: "Priya's bakery plan",
      content: "What is Priya's plan for her bakery?",
      confidence: 0.7
    },
    {
      proposal_type: "observation",
      title: "Sourdough demand",
      content: "Priya's sourdough reliably sells out at the Saturday market.",
      confidence: 0.8,
      tags: ["market"]
    }
  ],
  narrative:
    "<script>alert(1)</script> Because demand is steady, the next step is the loan; validation: ask about it. " +
    "Risk: refusal. Opportunity: Tomas. Growth: stall to shop. Prediction confidence is moderate."
})

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const timedRecalls = (id: string, count: number) =>
  Effect.gen(function*() {
    const queries = ["bakery plans", "who helps at the market", "loan for an oven", "sourdough sales", "baking course"]
    const times: Array<number> = []
    for (let n = 0; n < count; n++) {
      const started = performance.now()
      const response = yield* call("POST", `${bank(id)}/memories/recall`, { query: queries[n % queries.length] })
      times.push(performance.now() - started)
      assert.strictEqual(response.status, 200)
    }
    return times
  })

layer(app, { excludeTestServices: true, timeout: "4 minutes" })("dreams with a language model", (it) => {
  it.effect("a structured answer becomes the run; its proposals become a mental model and a recallable memory", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = "llm-dream"
      yield* seed(id)
      scripted.setFallback((body: any) => {
        const prompt: string = body.messages.at(-1).content
        const ids = [...prompt.matchAll(/^- \[([^\]]+)\]/gm)].map((m) => m[1]!)
        return { content: JSON.stringify(answerFor(ids)), usage: { prompt_tokens: 900, completion_tokens: 300 } }
      })
      const queued = yield* ok("POST", `${bank(id)}/dreams/trigger`, {})
      const detail = yield* finished(id, queued.body.operation_id)
      assert.strictEqual(detail.status, "completed", JSON.stringify(detail))
      const request = scripted.chatRequests().at(-1)!
      assert.include(request.body.messages.at(-1).content, "Priya wants to open a small bakery")

      const run = (yield* ok("GET", `${bank(id)}/dreams`)).body.items[0]
      assert.deepInclude(run, { generator: "llm", status: "success", trigger_source: "manual" })
      assert.strictEqual(run.summary, answerFor([]).summary)
      assert.notInclude(run.narrative_html, "<script")
      assert.include(run.narrative_html, "Priya applies for the oven loan")
      const prediction = run.predictions[0]
      assert.deepInclude(prediction, { expiration_window_days: 21, horizon: "near_term", status: "pending" })
      assert.strictEqual(prediction.supporting_evidence_ids.length, 1, "the invented id is dropped")
      assert.include(run.evidence_basis.recall_memory_ids, prediction.supporting_evidence_ids[0])
      assert.deepStrictEqual(run.growth_hypotheses.map((g: any) => g.title), ["From stall to shop"])

      const model = run.promotion_proposals.find((p: any) => p.proposal_type === "mental_model")
      const reviewed = yield* ok("POST", `${bank(id)}/dreams/proposals/${model.id}/review`, { action: "approve" })
      const modelId = reviewed.body.approval_metadata.created_mental_model_id
      const created = yield* ok("GET", `${bank(id)}/mental-models/${modelId}`)
      assert.strictEqual(created.body.name, "Priya's bakery plan")
      assert.include(created.body.tags, "dream")

      const observation = run.promotion_proposals.find((p: any) => p.proposal_type === "observation")
      yield* ok("POST", `${bank(id)}/dreams/proposals/${observation.id}/review`, { action: "approve" })
      const again = yield* call("POST", `${bank(id)}/dreams/proposals/${observation.id}/review`, { action: "approve" })
      assert.strictEqual(again.status, 400, again.text)
      const recalled = yield* ok("POST", `${bank(id)}/memories/recall`, {
        query: "sourdough sells out Saturday market"
      })
      assert.isTrue(
        recalled.body.results.some((r: any) => (r.tags ?? []).includes(`dream_run:${run.run_id}`)),
        recalled.text
      )

      const stats = (yield* ok("GET", `${bank(id)}/dreams/stats`)).body
      assert.deepInclude(stats, { total_runs: 1, avg_tokens: 1200, avg_output_tokens: 300, distilled_count: 2 })
    }))

  it.effect("an answer that cannot be repaired, or a failing provider, yields the deterministic run", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = "llm-fallback"
      yield* seed(id)
      for (const reply of [{ content: "I would rather write a poem about bread." }, { status: 500 }] as const) {
        scripted.setFallback(reply)
        const queued = yield* ok("POST", `${bank(id)}/dreams/trigger`, {})
        const detail = yield* finished(id, queued.body.operation_id)
        assert.strictEqual(detail.status, "completed", JSON.stringify(detail))
        const result = (yield* ok("GET", `${bank(id)}/operations/${queued.body.operation_id}/result`)).body.result
        assert.strictEqual(result.generator, "deterministic", JSON.stringify(result))
        assert.isString(result.fallback_reason)
      }
      const runs = (yield* ok("GET", `${bank(id)}/dreams`)).body.items
      assert.strictEqual(runs.length, 2)
      for (const run of runs) {
        assert.strictEqual(run.generator, "deterministic")
        assert.include(run.summary, "Priya")
        assert.isAbove(run.predictions.length + run.validation_outcomes.length, 0)
      }
    }))

  it.effect("a dream waiting on a slow model neither blocks recall nor is queued twice", () =>
    Effect.gen(function*() {
      const scripted = yield* Scripted
      const id = "llm-slow"
      yield* seed(id)
      const answer = (body: any) => {
        const ids = [...String(body.messages.at(-1).content).matchAll(/^- \[([^\]]+)\]/gm)].map((m) => m[1]!)
        return JSON.stringify(answerFor(ids))
      }
      // The model thinks until the checks below are done (it answers before the 20 s timeout of `models`).
      const thinking = Promise.withResolvers<void>()
      scripted.setFallback((body: any) => ({ content: answer(body), heldUntil: thinking.promise }))
      const before = scripted.chatRequests().length
      const queued = yield* ok("POST", `${bank(id)}/dreams/trigger`, {})
      yield* eventually(Effect.sync(() => scripted.chatRequests().length), (n) => n > before, Duration.seconds(20))
      // While the model is thinking: another trigger is a new pending run, and a third reuses it.
      const second = yield* ok("POST", `${bank(id)}/dreams/trigger`, {})
      const third = yield* ok("POST", `${bank(id)}/dreams/trigger`, {})
      assert.notStrictEqual(second.body.operation_id, queued.body.operation_id)
      assert.strictEqual(third.body.operation_id, second.body.operation_id)
      assert.isTrue(third.body.deduplicated)
      const during = yield* timedRecalls(id, 40)
      const waiting = yield* ok("GET", `${bank(id)}/operations/${queued.body.operation_id}`)
      assert.strictEqual(
        waiting.body.status,
        "running",
        "all 40 recalls answered while the dream still waited on the model"
      )
      console.log(
        `recall p95 during a dream waiting on its model ${
          percentile(during, 95).toFixed(1)
        } ms (ratio target: bench/dreams.ts)`
      )
      scripted.setFallback((body: any) => ({ content: answer(body) }))
      thinking.resolve()
      assert.strictEqual((yield* finished(id, queued.body.operation_id)).status, "completed")
      assert.strictEqual((yield* finished(id, second.body.operation_id)).status, "completed")
    }))
})
