/**
 * Retain with a language model, against a scripted OpenAI-compatible server on loopback: the stored facts,
 * types, times, entities and causal links are the model's; a malformed answer is repaired or retried; an
 * outage fails the operation with a clear message and opens the bank's circuit breaker, while reads go on.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { llmSettings } from "../../../layers/models/llm/LlmConfig.ts"
import { TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"
import { Scripted, scriptedApp, scriptedModels } from "../../support/ScriptedLlm.ts"

const models = scriptedModels((server) =>
  llmSettings({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "extractor",
    retryBase: "5 millis",
    maxRetries: 1,
    timeout: "3 seconds"
  })
)

const app = scriptedApp(
  {
    operationMaxAttempts: 1,
    operationRetryBase: Duration.millis(5),
    circuitBreakerFailures: 2,
    circuitBreakerOpenFor: Duration.seconds(30)
  },
  models
)

const bank = (id: string) => `/v1/default/banks/${id}`

const extraction = {
  facts: [
    {
      text: "Maria's flight to Lisbon on 3 March 2024 was cancelled because of a storm.",
      type: "world",
      occurred_start: "2024-03-03",
      occurred_end: "2024-03-03",
      entities: [{ name: "Maria", type: "person" }, { name: "Lisbon", type: "place" }]
    },
    {
      text: "Maria rebooked her trip to Lisbon for 10 March 2024.",
      type: "experience",
      occurred_start: "2024-03-10",
      entities: [{ name: "Maria", type: "person" }, { name: "Lisbon", type: "place" }],
      causal_relations: [{ target_index: 0, relation: "caused_by" }]
    }
  ]
}

layer(app, { excludeTestServices: true })("retain with a language model", (it) => {
  it.effect("facts, types, times, entities and causal links come from the model's answer", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      yield* server.request("PUT", bank("llm"), {
        json: { retain_mission: "Track travel plans", retain_extraction_mode: "verbose" }
      })
      scripted.script({ content: JSON.stringify(extraction), usage: { prompt_tokens: 120, completion_tokens: 80 } })
      const response = yield* server.request("POST", `${bank("llm")}/memories`, {
        json: {
          items: [{
            content: "My flight got cancelled by the storm, so I rebooked for next week.",
            timestamp: "2024-03-03T09:00:00Z",
            metadata: { source: "sms" }
          }]
        }
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.deepStrictEqual(response.body.usage, { input_tokens: 120, output_tokens: 80, total_tokens: 200 })

      const prompt = JSON.stringify(scripted.chatRequests().at(-1)!.body.messages)
      assert.include(prompt, "Track travel plans")
      assert.include(prompt, "2024-03-03T09:00:00.000Z")

      const list = yield* server.request("GET", `${bank("llm")}/memories/list`)
      const texts = list.body.items.map((item: any) => item.text).sort()
      assert.deepStrictEqual(texts, [extraction.facts[0]!.text, extraction.facts[1]!.text].sort())
      const rebooked = list.body.items.find((item: any) => item.text.includes("rebooked"))
      assert.strictEqual(rebooked.type, "experience")
      assert.strictEqual(rebooked.occurred_start, "2024-03-10T00:00:00.000Z")
      assert.deepStrictEqual(rebooked.entities, ["Lisbon", "Maria"])
      assert.deepStrictEqual(rebooked.metadata, { source: "sms" })
      const stats = yield* server.request("GET", `${bank("llm")}/stats`)
      assert.strictEqual(stats.body.links_by_link_type.caused_by, 1)
      const traces = yield* server.request("GET", `${bank("llm")}/llm-requests`)
      assert.strictEqual(traces.body.items[0].scope, "retain.extract_facts")
    }))

  it.effect("a cause the model names twice is stored once, and the retain succeeds", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      // The batch's link INSERT has no conflict check: a repeated cause must be merged before it, not fail the retain.
      const twice = {
        facts: [
          extraction.facts[0]!,
          {
            ...extraction.facts[1]!,
            causal_relations: [{ target_index: 0, relation: "caused_by" }, { target_index: 0, relation: "caused_by" }]
          }
        ]
      }
      scripted.script({ content: JSON.stringify(twice) })
      const response = yield* server.request("POST", `${bank("twice")}/memories`, {
        json: {
          items: [{
            content: "My flight got cancelled by the storm, so I rebooked for next week.",
            timestamp: "2024-03-03T09:00:00Z"
          }]
        }
      })
      assert.strictEqual(response.status, 200, response.text)
      const list = yield* server.request("GET", `${bank("twice")}/memories/list`)
      assert.strictEqual(list.body.items.length, 2)
      const stats = yield* server.request("GET", `${bank("twice")}/stats`)
      assert.strictEqual(stats.body.links_by_link_type.caused_by, 1)
    }))

  it.effect("a malformed answer is repaired, and an invalid one is retried with the error", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      scripted.script({
        content:
          "<think>let me see</think>Sure! Here you go:\n```json\n{\"facts\": [{\"text\": \"Ada prefers tea.\", \"type\": \"world\",}]}\n```"
      })
      const repaired = yield* server.request("POST", `${bank("repair")}/memories`, {
        json: { items: [{ content: "Ada: tea please" }] }
      })
      assert.strictEqual(repaired.status, 200, repaired.text)
      scripted.script(
        { content: "{\"facts\": [{\"text\": \"Bob drinks coffee.\", \"type\": \"opinionated\"}]}" },
        { content: "{\"facts\": [{\"text\": \"Bob drinks coffee.\", \"type\": \"world\"}]}" }
      )
      const before = scripted.chatRequests().length
      const retried = yield* server.request("POST", `${bank("repair")}/memories`, {
        json: { items: [{ content: "Bob: coffee" }] }
      })
      assert.strictEqual(retried.status, 200, retried.text)
      assert.strictEqual(scripted.chatRequests().length, before + 2)
      assert.include(JSON.stringify(scripted.chatRequests().at(-1)!.body.messages), "opinionated")
      const list = yield* server.request("GET", `${bank("repair")}/memories/list`)
      assert.deepStrictEqual(list.body.items.map((item: any) => item.text).sort(), [
        "Ada prefers tea.",
        "Bob drinks coffee."
      ])
    }))

  it.effect("an outage fails the operation clearly, opens the circuit breaker, and reads keep working", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      scripted.setFallback({ status: 503, body: { error: { message: "upstream overloaded" } } })
      const sync = yield* server.request("POST", `${bank("outage")}/memories`, {
        json: { items: [{ content: "Something happened." }] }
      })
      assert.strictEqual(sync.status, 503)
      assert.include(sync.body.detail, "language model")
      for (let attempt = 0; attempt < 2; attempt++) {
        const queued = yield* server.request("POST", `${bank("outage")}/memories`, {
          json: { items: [{ content: `Event number ${attempt} happened.` }], async: true }
        })
        const failed = yield* eventually(
          server.request("GET", `${bank("outage")}/operations/${queued.body.operation_id}`),
          (r) => r.body.status === "failed"
        )
        assert.include(failed.body.error_message, "language model")
        assert.notInclude(failed.body.error_message, "Bearer")
      }
      const operations = yield* server.request("GET", `${bank("outage")}/operations`)
      assert.strictEqual(operations.body.worker.circuit_state, "open")
      const waiting = yield* server.request("POST", `${bank("outage")}/memories`, {
        json: { items: [{ content: "Queued while the circuit is open." }], async: true }
      })
      const pending = yield* server.request("GET", `${bank("outage")}/operations/${waiting.body.operation_id}`)
      assert.strictEqual(pending.body.status, "pending")
      const list = yield* server.request("GET", `${bank("outage")}/memories/list`)
      assert.strictEqual(list.status, 200)
      yield* server.request("POST", `${bank("llm")}/memories/recall`, { json: { query: "Lisbon flight" } }).pipe(
        Effect.tap((recalled) =>
          Effect.sync(() => {
            assert.strictEqual(recalled.status, 200, "recall keeps answering while the language model is down")
            assert.include(recalled.body.results[0].text, "Lisbon")
          })
        )
      )
      scripted.setFallback({ status: 500 })
    }))
})
