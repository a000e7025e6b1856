/**
 * The reflect time budget bounds every model call in it: with a 4 s base wall time, a model that never answers a
 * search turn is cut off at the gathering deadline and the answer is still asked for; a model that answers nothing
 * yields a labelled summary of the evidence within the budget — never a hung request — even though the provider's
 * own per-request timeout is much longer. The app runs on the test clock: time passes only when the test moves it,
 * after the model has the request, so each deadline falls exactly where the budget puts it on any machine.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import type { ScriptedReply } from "../support/ScriptedOpenAi.ts"
import { TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const behaviour = { answer: "hang" as "hang" | "reply" }

const route = (body: any): ScriptedReply => {
  const last = String(body?.messages?.at(-1)?.content ?? "")
  if (last.includes("Answer the question now") && behaviour.answer === "reply") {
    return { content: "The kettle is in the attic." }
  }
  return { hang: true }
}

const models = scriptedModels((server) => {
  server.setFallback(route)
  return llmSettings({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "slow",
    maxRetries: 0,
    timeout: "60 seconds",
    purposes: { retain: { provider: "none" } }
  })
})

const app = scriptedApp({ reflectTimeout: Duration.seconds(4) }, models)

const bank = "/v1/default/banks/slow"

/** Waits, on the real clock, until the model has received `count` chat requests since the layer started. */
const modelHasReceived = (count: number) =>
  Effect.gen(function*() {
    const scripted = yield* Scripted
    yield* TestClock.withLive(
      eventually(Effect.sync(() => scripted.chatRequests().length), (received) => received >= count)
    )
  })

const chatRequestsSoFar = Effect.gen(function*() {
  const scripted = yield* Scripted
  return scripted.chatRequests().length
})

/**
 * The server is built on the test's clock, so the test decides when time passes. Waiting for the model on the real
 * clock is expected here: the clock's warning about that comes only after the vitest time limit.
 */
const onTestClock = app.pipe(Layer.provideMerge(TestClock.layer({ warningDelay: "2 minutes" })))

layer(onTestClock, { excludeTestServices: true })("reflect deadline", (it) => {
  it.effect("a silent model yields a labelled summary within the time budget", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank}/memories`, {
        json: { items: [{ content: "The old kettle is stored in the attic." }] }
      })
      behaviour.answer = "hang"
      const before = yield* chatRequestsSoFar
      const reflecting = yield* Effect.forkChild(server.request("POST", `${bank}/reflect`, {
        json: { query: "Where is the kettle?", include: { facts: {}, tool_calls: {} } }
      }))
      yield* modelHasReceived(before + 1)
      // Half of the 4 s wall time: the gathering deadline cuts the silent search turn off.
      yield* TestClock.adjust("2 seconds")
      yield* modelHasReceived(before + 2)
      // The rest of the budget: the answer is cut off too, and the reply needs no time beyond the budget.
      yield* TestClock.adjust("2 seconds")
      const response = yield* Fiber.join(reflecting)
      assert.strictEqual(response.status, 200, response.text)
      assert.match(response.body.text, /^> \*\*Partial answer\*\*/)
      assert.include(response.body.text, "The old kettle is stored in the attic.")
      assert.deepStrictEqual(response.body.trace.llm_calls.map((call: any) => call.scope), [
        "reflect.decide",
        "reflect.answer"
      ])
      const [decide, answer] = response.body.trace.llm_calls
      // Gathering ends at half the wall time; the answer gets the rest.
      assert.strictEqual(decide.duration_ms, 2_000)
      assert.strictEqual(answer.duration_ms, 2_000)
      assert.strictEqual(response.body.based_on.memories.length, 1)
    }))

  it.effect("a search turn that stalls still leaves time for the answer", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      behaviour.answer = "reply"
      const before = yield* chatRequestsSoFar
      const reflecting = yield* Effect.forkChild(server.request("POST", `${bank}/reflect`, {
        json: { query: "Where is the kettle?", include: { tool_calls: {} } }
      }))
      yield* modelHasReceived(before + 1)
      yield* TestClock.adjust("2 seconds")
      const response = yield* Fiber.join(reflecting)
      assert.strictEqual(response.status, 200, response.text)
      assert.strictEqual(response.body.text, "The kettle is in the attic.")
      assert.deepStrictEqual(response.body.trace.llm_calls.map((call: any) => call.scope), [
        "reflect.decide",
        "reflect.answer"
      ])
    }))
})
