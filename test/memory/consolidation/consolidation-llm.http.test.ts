/**
 * Consolidation with a language model, against a scripted OpenAI-compatible server on loopback that records the
 * prompts (retain stays offline: only the `consolidation` purpose has a provider). The model's creates, updates
 * and duplicate creates become created, updated and merged observations; the prompt carries the bank's rules and
 * mission and the related observations; an answer out of format falls back to the offline consolidator; an
 * outage fails the operation and keeps the facts waiting for the retry.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import type { BankEvent } from "../../../src/events/BankEvents.ts"
import { BankEvents } from "../../../src/events/BankEvents.ts"
import { builtInRules } from "../../../src/memory/consolidation/LlmConsolidator.ts"
import { TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"
import { onePurpose, Scripted, scriptedApp, scriptedModels } from "../../support/ScriptedLlm.ts"

const models = scriptedModels(onePurpose("consolidation", "consolidator"))

const events: Array<BankEvent> = []
const captureEvents = BankEvents.listener(
  Effect.succeed((event: BankEvent) => Effect.sync(() => void events.push(event)))
)

const app = scriptedApp({ operationMaxAttempts: 1, operationRetryBase: Duration.millis(5) }, models, captureEvents)

const bank = (id: string) => `/v1/default/banks/${id}`

const request = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, json === undefined ? {} : { json })
  })

const retain = (id: string, content: string) =>
  Effect.tap(
    request("POST", `${bank(id)}/memories`, { items: [{ content, timestamp: "2024-03-01T09:00:00Z" }] }),
    (r) => Effect.sync(() => assert.strictEqual(r.status, 200, r.text))
  )

/** Consolidates with the next scripted answer and returns the finished operation's result. */
const consolidateWith = (id: string, answer: unknown) =>
  Effect.gen(function*() {
    const scripted = yield* Scripted
    scripted.script({ content: JSON.stringify(answer), usage: { prompt_tokens: 200, completion_tokens: 40 } })
    const queued = yield* request("POST", `${bank(id)}/consolidate`)
    assert.strictEqual(queued.status, 200, queued.text)
    return yield* eventually(request("GET", `${bank(id)}/operations/${queued.body.operation_id}/result`), (r) =>
      r.body.status === "completed" || r.body.status === "failed")
  })

const observations = (id: string) =>
  Effect.map(request("GET", `${bank(id)}/memories/list?type=observation`), (r) => r.body.items as Array<any>)

const lastPrompt = Effect.gen(function*() {
  const scripted = yield* Scripted
  const messages = scripted.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>
  return { system: messages[0]!.content, user: messages[1]!.content }
})

layer(app, { excludeTestServices: true })("consolidation with a language model", (it) => {
  it.effect("the model's creates, updates and duplicate creates become created, updated and merged observations", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("hr"), {
        enable_observations: false,
        observations_mission: "Record where each person works and what they do there.",
        reflect_mission: "Help a recruiter keep track of candidates."
      })
      yield* retain("hr", "Alice works at Google as a software engineer.")
      const created = yield* consolidateWith("hr", {
        creates: [{ text: "Alice works at Google as a software engineer.", facts: ["F1"] }]
      })
      assert.strictEqual(created.body.status, "completed", created.body.error_message)
      assert.include(created.body.result, { mode: "llm", observations_created: 1, facts_processed: 1 })
      assert.deepStrictEqual(created.body.result.usage, { input_tokens: 200, output_tokens: 40, total_tokens: 240 })
      const prompt = yield* lastPrompt
      assert.include(prompt.system, "Record where each person works", "the observations mission is the rules")
      assert.notInclude(prompt.system, builtInRules[0]!, "…and replaces the built-in ones")
      assert.include(prompt.system, "Help a recruiter keep track of candidates.")
      assert.include(prompt.user, "F1 [2024-03-01, world] Alice works at Google as a software engineer.")
      const [first] = yield* observations("hr")
      assert.strictEqual(first.text, "Alice works at Google as a software engineer.")
      assert.strictEqual(first.source_fact_ids.length, 1)

      // A weak model restates the observation instead of updating it: the two are merged, not multiplied.
      yield* retain("hr", "Alice is a software engineer at Google.")
      const merged = yield* consolidateWith("hr", {
        creates: [{ text: "Alice is a software engineer at Google.", facts: ["F1"] }]
      })
      assert.include(merged.body.result, { observations_created: 0, observations_merged: 1 })
      assert.include((yield* lastPrompt).user, `O1: ${first.text}`, "related observations are shown")
      const afterMerge = yield* observations("hr")
      assert.strictEqual(afterMerge.length, 1)
      assert.strictEqual(afterMerge[0].id, first.id)
      assert.strictEqual(afterMerge[0].source_fact_ids.length, 2)

      yield* retain("hr", "Alice moved to Meta in 2024.")
      const updated = yield* consolidateWith("hr", {
        updates: [{
          observation: "O1",
          text: "Alice worked at Google as a software engineer and moved to Meta in 2024.",
          facts: ["F1"]
        }],
        creates: [{ text: "An observation about nothing shown.", facts: ["F9"] }]
      })
      assert.include(updated.body.result, { observations_updated: 1, observations_created: 0 })
      const [final] = yield* observations("hr")
      assert.strictEqual(final.text, "Alice worked at Google as a software engineer and moved to Meta in 2024.")
      assert.strictEqual(final.source_fact_ids.length, 3)

      const history = yield* request("GET", `${bank("hr")}/memories/${final.id}/history`)
      assert.deepStrictEqual(history.body.history.map((entry: any) => [entry.version, entry.change]), [
        [1, "created"],
        [2, "merged"],
        [3, "updated"]
      ])
      assert.deepStrictEqual(history.body.history.map((entry: any) => entry.new_facts.map((fact: any) => fact.text)), [
        ["Alice works at Google as a software engineer."],
        ["Alice is a software engineer at Google."],
        ["Alice moved to Meta in 2024. [in 2024: 2024]"]
      ])
      assert.strictEqual(history.body.history[2].previous_text, "Alice works at Google as a software engineer.")

      const recalled = yield* request("POST", `${bank("hr")}/memories/recall`, {
        query: "Where does Alice work?",
        types: ["observation"],
        include: { source_facts: {} }
      })
      assert.strictEqual(recalled.body.results[0].id, final.id)
      assert.sameMembers(Object.keys(recalled.body.source_facts), final.source_fact_ids)
      assert.isTrue(
        Object.values(recalled.body.source_facts).some((fact: any) => fact.text.startsWith("Alice moved to Meta"))
      )

      const completed = events.filter((event) => event.type === "consolidation.completed" && event.bankId === "hr")
      assert.deepStrictEqual(
        completed.map((
          event
        ) => [
          event.data["observations_created"],
          event.data["observations_merged"],
          event.data["observations_updated"]
        ]),
        [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
      )
      assert.strictEqual(completed[2]!.eventId, `consolidation.completed:${completed[2]!.data["operation_id"]}`)
    }))

  it.effect("the built-in rules, mission and disposition reach the prompt; a change of them regenerates", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("rules"), {
        enable_observations: false,
        disposition: { skepticism: 5, literalism: 5, empathy: 1 }
      })
      yield* retain("rules", "Bob says he might move to Lisbon next year.")
      const result = yield* consolidateWith("rules", {
        creates: [{ text: "Bob is considering a move to Lisbon.", facts: ["F1"] }]
      })
      assert.strictEqual(result.body.status, "completed")
      const prompt = yield* lastPrompt
      for (const rule of builtInRules) assert.include(prompt.system, rule)
      assert.include(prompt.system, "Be skeptical")
      assert.include(prompt.system, "Stay literal")
      assert.include(prompt.system, "Leave feelings out")

      const scripted = yield* Scripted
      scripted.script({
        content: JSON.stringify({ creates: [{ text: "Bob may move to Lisbon in 2025.", facts: ["F1"] }] })
      })
      yield* request("PATCH", bank("rules"), { enable_observations: true, reflect_mission: "Track relocation plans." })
      const regenerate = yield* request("GET", `${bank("rules")}/operations?task_type=regenerate_observations`)
      assert.strictEqual(regenerate.body.operations.length, 1)
      const done = yield* eventually(
        request("GET", `${bank("rules")}/operations/${regenerate.body.operations[0].id}/result`),
        (r) => r.body.status === "completed"
      )
      assert.strictEqual(done.body.result.observations_removed, 1)
      assert.include((yield* lastPrompt).system, "What this memory bank is for: Track relocation plans.")
      assert.deepStrictEqual((yield* observations("rules")).map((o) => o.text), ["Bob may move to Lisbon in 2025."])
    }))

  it.effect("an answer that stays out of format falls back to the offline consolidator", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("garbled"), { enable_observations: false })
      yield* retain("garbled", "Carol: I adopted a greyhound named Pixel from the shelter.")
      const scripted = yield* Scripted
      scripted.script({ content: "I would rather not answer in JSON." })
      const result = yield* consolidateWith("garbled", "still no JSON")
      assert.strictEqual(result.body.status, "completed", result.body.error_message)
      const [observation] = yield* observations("garbled")
      assert.match(observation.text, /^Carol — greyhound: adopted a greyhound named Pixel/)
    }))

  it.effect("an outage fails the consolidation and keeps its facts waiting; the retry consolidates them", () =>
    Effect.gen(function*() {
      yield* request("PUT", bank("outage"), { enable_observations: false })
      yield* retain("outage", "Dan runs the Thursday chess club at the library.")
      const scripted = yield* Scripted
      scripted.script({ status: 503, body: { error: { message: "upstream overloaded" } } })
      const queued = yield* request("POST", `${bank("outage")}/consolidate`)
      const failed = yield* eventually(
        request("GET", `${bank("outage")}/operations/${queued.body.operation_id}`),
        (r) => r.body.status === "failed"
      )
      assert.include(failed.body.error_message, "language model")
      const stats = yield* request("GET", `${bank("outage")}/stats`)
      assert.strictEqual(stats.body.pending_consolidation, 1)
      assert.strictEqual(stats.body.total_observations, 0)

      scripted.script({
        content: JSON.stringify({ creates: [{ text: "Dan runs a chess club on Thursdays.", facts: ["F1"] }] })
      })
      const retried = yield* request("POST", `${bank("outage")}/operations/${queued.body.operation_id}/retry`)
      assert.strictEqual(retried.status, 200, retried.text)
      yield* eventually(request("GET", `${bank("outage")}/stats`), (r) => r.body.pending_consolidation === 0)
      assert.deepStrictEqual((yield* observations("outage")).map((o) => o.text), [
        "Dan runs a chess club on Thursdays."
      ])
    }))
})
