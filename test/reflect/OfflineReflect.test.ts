/**
 * Reflect with no language model: a deterministic, labelled summary of the best memories (best match first, the
 * rest in time order, near-duplicates folded), with based_on and a trace of the initial searches, no usage, no
 * opinion formed, and no structured output it could not honestly produce.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

layer(testApp(), { excludeTestServices: true })("offline reflect", (it) => {
  it.effect("answers with a labelled summary of the most relevant memories and what it was based on", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const retained = yield* server.request("POST", `${bank("garden")}/memories`, {
        json: {
          items: [
            { content: "Priya planted tomatoes in the greenhouse.", timestamp: "2024-04-02T10:00:00Z" },
            { content: "Priya planted tomatoes in the greenhouse again.", timestamp: "2024-04-03T10:00:00Z" },
            { content: "The greenhouse tomatoes got blight in July.", timestamp: "2024-07-20T10:00:00Z" },
            { content: "Priya's brother repairs bicycles.", timestamp: "2024-05-01T10:00:00Z" }
          ]
        }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      const response = yield* server.request("POST", `${bank("garden")}/reflect`, {
        json: {
          query: "What happened to the greenhouse tomatoes?",
          include: { facts: {}, tool_calls: {} },
          response_schema: { type: "object", properties: { summary: { type: "string" } } }
        }
      })
      assert.strictEqual(response.status, 200, response.text)
      const { text, based_on, trace, usage, structured_output } = response.body
      assert.match(text, /^> \*\*Offline answer\*\* — no language model is configured/)
      assert.match(text, /\*\*Best match:\*\* .*tomatoes/)
      assert.include(text, "blight")
      // "planted tomatoes" and "planted tomatoes ... again" say nearly the same: the summary shows one of them.
      assert.strictEqual(text.match(/planted tomatoes/g)?.length, 1)
      assert.isAtLeast(based_on.memories.length, 3)
      assert.deepStrictEqual(based_on.directives, [])
      assert.deepStrictEqual(usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 })
      assert.isNull(structured_output)
      assert.deepStrictEqual(trace.llm_calls, [])
      assert.deepStrictEqual(trace.tool_calls.map((call: any) => call.iteration), [0, 0, 0])

      const opinions = yield* server.request("GET", `${bank("garden")}/operations?task_type=form_opinion`)
      assert.strictEqual(opinions.body.total, 0)
    }))

  it.effect("says plainly when nothing matches, and reads only within the tag scope", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("scoped")}/directives`, {
        json: { name: "Formal", content: "Answer formally." }
      })
      yield* server.request("POST", `${bank("scoped")}/memories`, {
        json: { items: [{ content: "The launch is scheduled for Friday.", tags: ["secret"] }] }
      })
      const hidden = yield* server.request("POST", `${bank("scoped")}/reflect`, {
        json: { query: "When is the launch?", tags: ["public"], tags_match: "any_strict", include: { facts: {} } }
      })
      assert.strictEqual(hidden.status, 200, hidden.text)
      assert.include(hidden.body.text, "Nothing in this bank's memories matches")
      assert.deepStrictEqual(hidden.body.based_on.memories, [])
      // The summary follows no rule, so it claims none.
      assert.deepStrictEqual(hidden.body.based_on.directives, [])
      const visible = yield* server.request("POST", `${bank("scoped")}/reflect`, {
        json: { query: "When is the launch?", tags: ["secret"], tags_match: "any_strict" }
      })
      assert.include(visible.body.text, "The launch is scheduled for Friday.")
    }))

  it.effect("reflect/submit works offline too and its result is retrievable", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("later")}/memories`, {
        json: { items: [{ content: "Olu runs every morning." }] }
      })
      const submitted = yield* server.request("POST", `${bank("later")}/reflect/submit`, {
        json: { query: "Does Olu exercise?" }
      })
      assert.strictEqual(submitted.status, 200, submitted.text)
      yield* eventually(
        server.request("GET", `${bank("later")}/operations/${submitted.body.operation_id}`),
        (r) => r.body.status === "completed"
      )
      const result = yield* server.request("GET", `${bank("later")}/operations/${submitted.body.operation_id}/result`)
      assert.include(result.body.result.text, "Olu runs every morning.")
    }))

  it.effect("mental models the bank keeps are read first and named in based_on", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("POST", `${bank("models")}/memories`, {
        json: {
          items: [{ content: "Jun waters the orchids every Sunday." }, { content: "The orchids bloom in February." }]
        }
      })
      const created = yield* server.request("POST", `${bank("models")}/mental-models`, {
        json: { id: "orchid-care", name: "Orchid care", source_query: "How are the orchids looked after?" }
      })
      assert.strictEqual(created.status, 200, created.text)
      yield* eventually(
        server.request("GET", `${bank("models")}/mental-models/orchid-care`),
        (r) => typeof r.body.content === "string" && r.body.content.includes("orchids")
      )
      const response = yield* server.request("POST", `${bank("models")}/reflect`, {
        json: { query: "How often are the orchids watered?", include: { facts: {} } }
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.deepStrictEqual(response.body.based_on.mental_models.map((model: any) => model.id), ["orchid-care"])
      assert.strictEqual(response.body.based_on.mental_models[0].context, "Orchid care")
      assert.include(response.body.text, "**Mental models:**\n- **Orchid care:**")
    }))
})
