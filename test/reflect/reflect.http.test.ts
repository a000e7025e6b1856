/**
 * Reflect with a language model, against a scripted OpenAI-compatible server on loopback that answers by what
 * each prompt asks for and records every prompt: the agent's searches, based_on, trace, usage, structured output
 * with its one corrective retry, the bank's mission, directives and disposition in the prompt, tag scoping,
 * opinions formed after a reflect and reinforced by later facts, reflect as an operation, and bad input.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { modelKey } from "../../src/memory/Reembedding.ts"
import { Embeddings } from "../../src/models/Embeddings.ts"
import { OpinionStore } from "../../src/reflect/opinions/OpinionStore.ts"
import type { ScriptedOpenAi, ScriptedReply } from "../support/ScriptedOpenAi.ts"
import { TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { lastUser, reflectorModels, Scripted, scriptedApp, systemOf } from "../support/ScriptedLlm.ts"

/** Replies per kind of prompt, consumed in order; background opinion work cannot steal the reflect's replies. */
const replies = {
  decisions: [] as Array<unknown>,
  answers: [] as Array<string>,
  structured: [] as Array<string>,
  /** Opinions to form, keyed by a phrase of the answer: other banks' opinion tasks run concurrently. */
  opinions: new Map<string, unknown>(),
  stances: [] as Array<unknown>,
  /** While set, every model request fails as an overloaded provider would. */
  outage: false
}

const route = (body: any): ScriptedReply => {
  if (replies.outage) return { status: 503, body: { error: { message: "upstream overloaded" } } }
  const last = lastUser(body)
  const reply = (value: unknown): ScriptedReply => ({
    content: typeof value === "string" ? value : JSON.stringify(value)
  })
  if (systemOf(body).includes("You keep the opinions")) {
    const key = [...replies.opinions.keys()].find((phrase) => last.includes(phrase))
    return reply(key === undefined ? { opinions: [] } : replies.opinions.get(key))
  }
  if (last.includes("The memory bank holds this opinion")) return reply(replies.stances.shift() ?? { stances: [] })
  if (last.includes("exactly matching the JSON Schema") || last.includes("Express this answer as one JSON")) {
    return reply(replies.structured.shift() ?? "{}")
  }
  if (last.includes("Decide the next step") || last.includes("\"reflect_action\"")) {
    return reply(replies.decisions.shift() ?? { tool: "answer", query: null, answer: "Nothing more to add." })
  }
  if (last.includes("Answer the question now")) return reply(replies.answers.shift() ?? "A final answer.")
  return { status: 400, body: { error: { message: "unexpected prompt" } } }
}

const app = scriptedApp({}, reflectorModels(route))

const bank = (id: string) => `/v1/default/banks/${id}`

const decidePrompts = (scripted: ScriptedOpenAi, since: number) =>
  scripted.chatRequests().slice(since).filter((request) => lastUser(request.body).includes("Decide the next step"))

/** The offline extractor appends resolved dates ("[in March: March 2027]"), so compare the statement itself. */
const hasText = (texts: ReadonlyArray<string>, statement: string) => texts.some((text) => text.startsWith(statement))

const retain = (id: string, items: ReadonlyArray<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `${bank(id)}/memories`, { json: { items } })
    assert.strictEqual(response.status, 200, response.text)
  })

layer(app, { excludeTestServices: true, timeout: "2 minutes" })("reflect with a language model", (it) => {
  it.effect("answers after searching, with based_on, trace, usage and structured output retried once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      yield* retain("trip", [
        { content: "Maria booked a flight to Lisbon for the conference in March." },
        { content: "Maria is allergic to peanuts." },
        { content: "The Lisbon conference is about marine biology." }
      ])
      replies.decisions.push(
        { tool: "recall", query: "Lisbon conference topic", answer: null },
        { tool: "answer", query: null, answer: "Maria is flying to Lisbon in March for a marine biology conference." }
      )
      replies.structured.push(
        "{\"destination\": \"Lisbon\"}",
        "```json\n{\"destination\": \"Lisbon\", \"month\": \"March\"}\n```"
      )
      const response = yield* server.request("POST", `${bank("trip")}/reflect`, {
        json: {
          query: "Where is Maria travelling and why?",
          include: { facts: {}, tool_calls: {} },
          response_schema: {
            type: "object",
            properties: { destination: { type: "string" }, month: { type: "string" } },
            required: ["destination", "month"]
          }
        }
      })
      assert.strictEqual(response.status, 200, response.text)
      const body = response.body
      assert.strictEqual(body.text, "Maria is flying to Lisbon in March for a marine biology conference.")
      assert.deepStrictEqual(body.structured_output, { destination: "Lisbon", month: "March" })

      const memoryTexts = body.based_on.memories.map((memory: any) => memory.text)
      assert.isTrue(
        hasText(memoryTexts, "Maria booked a flight to Lisbon for the conference in March."),
        memoryTexts.join("\n")
      )
      assert.isTrue(hasText(memoryTexts, "The Lisbon conference is about marine biology."), memoryTexts.join("\n"))
      for (const memory of body.based_on.memories) {
        assert.hasAllKeys(memory, ["id", "text", "type", "context", "occurred_start", "occurred_end"])
      }
      assert.deepStrictEqual(body.based_on.mental_models, [])
      assert.deepStrictEqual(body.based_on.directives, [])

      const tools = body.trace.tool_calls.map((call: any) => `${call.iteration}:${call.tool}`)
      assert.deepStrictEqual(tools, ["0:search_mental_models", "0:search_observations", "0:recall", "1:recall"])
      const followUp = body.trace.tool_calls[3]
      assert.strictEqual(followUp.input.query, "Lisbon conference topic")
      assert.isNumber(followUp.duration_ms)
      assert.isArray(followUp.output.memories)
      assert.deepStrictEqual(
        body.trace.llm_calls.map((call: any) => call.scope),
        ["reflect.decide", "reflect.decide", "reflect.structure", "reflect.structure_retry"]
      )
      // Four calls at the scripted server's 10 prompt + 5 completion tokens each.
      assert.deepStrictEqual(body.usage, { input_tokens: 40, output_tokens: 20, total_tokens: 60 })

      // The retry told the model what was wrong with its first JSON.
      const retry = scripted.chatRequests().find((request) =>
        lastUser(request.body).includes("exactly matching the JSON Schema")
      )
      assert.include(lastUser(retry!.body), "month")

      const plain = yield* server.request("POST", `${bank("trip")}/reflect`, {
        json: { query: "What is Maria allergic to?" }
      })
      assert.strictEqual(plain.status, 200, plain.text)
      assert.isNull(plain.body.based_on)
      assert.isNull(plain.body.trace)
      assert.isNull(plain.body.structured_output)
    }))

  it.effect("mission, active directives by priority and disposition reach the prompt and change with the bank", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      yield* server.request("PUT", bank("advisor"), {
        json: {
          reflect_mission: "Help the family plan healthy meals.",
          disposition: { skepticism: 5, literalism: 1, empathy: 4 }
        }
      })
      yield* retain("advisor", [{ content: "Tom stopped eating meat last year." }])
      const directive = (json: Record<string, unknown>) =>
        server.request("POST", `${bank("advisor")}/directives`, { json })
      yield* directive({ name: "Units", content: "Give quantities in grams.", priority: 1 })
      yield* directive({ name: "Safety", content: "Never recommend raw fish.", priority: 9 })
      yield* directive({ name: "Retired", content: "Mention the old menu.", priority: 50, is_active: false })
      yield* directive({ name: "Kids only", content: "Use simple words for children.", priority: 5, tags: ["kids"] })

      const since = scripted.chatRequests().length
      replies.decisions.push({ tool: "answer", query: null, answer: "Plan vegetarian meals for Tom." })
      const response = yield* server.request("POST", `${bank("advisor")}/reflect`, {
        json: { query: "What should we cook for Tom?", include: { facts: {} } }
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.deepStrictEqual(response.body.based_on.directives.map((d: any) => d.name), ["Safety", "Units"])

      const system = systemOf(decidePrompts(scripted, since)[0]!.body)
      assert.include(system, "Help the family plan healthy meals.")
      assert.isBelow(system.indexOf("Never recommend raw fish."), system.indexOf("Give quantities in grams."))
      assert.notInclude(system, "Mention the old menu.")
      assert.notInclude(system, "Use simple words for children.")
      assert.include(system, "Skepticism 5/5")
      assert.include(system, "unless at least two memories agree")
      assert.include(system, "Literalism 1/5")
      assert.include(system, "Empathy 4/5")

      // A different disposition gives the model different instructions for the same question.
      yield* server.request("PATCH", bank("advisor"), {
        json: { disposition: { skepticism: 1, literalism: 5, empathy: 1 } }
      })
      const later = scripted.chatRequests().length
      replies.decisions.push({ tool: "answer", query: null, answer: "Vegetarian." })
      yield* server.request("POST", `${bank("advisor")}/reflect`, { json: { query: "What should we cook for Tom?" } })
      const changed = systemOf(decidePrompts(scripted, later)[0]!.body)
      assert.include(changed, "Skepticism 1/5")
      assert.include(changed, "take what the memories say at face value")
      assert.include(changed, "Literalism 5/5")
      assert.include(changed, "make no inferences")
      assert.include(changed, "Empathy 1/5")
      assert.notInclude(changed, "unless at least two memories agree")
    }))

  it.effect("tags scope the memories reflect reads and the tagged directives it obeys; context joins the question", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const scripted = yield* Scripted
      yield* retain("scoped", [
        { content: "Project Falcon ships the mobile app in June.", tags: ["team-a"] },
        { content: "Project Falcon ships the web app in July.", tags: ["team-b"] }
      ])
      yield* server.request("POST", `${bank("scoped")}/directives`, {
        json: { name: "Team A style", content: "Answer in bullet points.", tags: ["team-a"] }
      })
      const since = scripted.chatRequests().length
      replies.decisions.push({ tool: "answer", query: null, answer: "June." })
      const response = yield* server.request("POST", `${bank("scoped")}/reflect`, {
        json: {
          query: "When does Project Falcon ship?",
          context: "We are team A planning a launch party.",
          tags: ["team-a"],
          tags_match: "any_strict",
          include: { facts: {} }
        }
      })
      assert.strictEqual(response.status, 200, response.text)
      const texts = response.body.based_on.memories.map((memory: any) => memory.text)
      assert.isTrue(hasText(texts, "Project Falcon ships the mobile app in June."), texts.join("\n"))
      assert.isFalse(hasText(texts, "Project Falcon ships the web app in July."), texts.join("\n"))
      assert.deepStrictEqual(response.body.based_on.directives.map((d: any) => d.name), ["Team A style"])
      const prompt = decidePrompts(scripted, since)[0]!.body
      assert.include(systemOf(prompt), "Answer in bullet points.")
      assert.include(
        lastUser(prompt),
        "When does Project Falcon ship?\n\nContext: We are team A planning a launch party."
      )
      assert.notInclude(lastUser(prompt), "web app")
    }))

  it.effect("a model-written answer forms an opinion; newer facts raise or lower its confidence", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("opinions", [{ content: "Sam delivered the Q1 report two days early." }])
      replies.decisions.push({ tool: "answer", query: null, answer: "Sam tends to deliver early." })
      replies.opinions.set("Sam tends to deliver early.", {
        opinions: [{ text: "Sam is a reliable colleague.", confidence: 0.6 }]
      })
      const response = yield* server.request("POST", `${bank("opinions")}/reflect`, {
        json: { query: "Is Sam reliable?" }
      })
      assert.strictEqual(response.status, 200, response.text)

      const opinion = yield* eventually(
        server.request("GET", `${bank("opinions")}/memories/list?type=opinion`),
        (r) => r.body.items.length === 1
      ).pipe(Effect.map((r) => r.body.items[0]))
      assert.strictEqual(opinion.text, "Sam is a reliable colleague.")
      // Exactly as the model gave it: a `real` column reads back as 0.6, not 0.6000000238418579 (layers/storage/Float4.ts).
      assert.strictEqual(opinion.confidence, 0.6)
      const operations = yield* server.request("GET", `${bank("opinions")}/operations?task_type=form_opinion`)
      assert.strictEqual(operations.body.operations[0].status, "completed")

      const confidenceAfter = (content: string, stance: string) =>
        Effect.gen(function*() {
          replies.stances.push({ stances: [{ fact: 1, stance }] })
          const before = (yield* server.request(
            "GET",
            `${bank("opinions")}/operations?task_type=reinforce_opinion&status=completed`
          )).body.total
          yield* retain("opinions", [{ content }])
          yield* eventually(
            server.request("GET", `${bank("opinions")}/operations?task_type=reinforce_opinion&status=completed`),
            (r) => r.body.total === before + 1
          )
          const read = yield* server.request("GET", `${bank("opinions")}/memories/${opinion.id}`)
          return read.body.confidence as number
        })
      const raised = yield* confidenceAfter("Sam is a reliable colleague who finished the audit early.", "supports")
      assert.closeTo(raised, 0.6 + 0.4 * 0.1, 1e-6)
      const lowered = yield* confidenceAfter(
        "Sam is a reliable colleague but missed the audit deadline.",
        "contradicts"
      )
      assert.closeTo(lowered, raised * 0.8, 1e-6)
    }))

  it.effect("an opinion formed by a reflect scoped with tag_groups carries the scope's tags", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("grouped", [{ content: "Priya reviews every pull request within an hour.", tags: ["team-x"] }])
      replies.decisions.push({ tool: "answer", query: null, answer: "Priya reviews pull requests quickly." })
      replies.opinions.set("Priya reviews pull requests quickly.", {
        opinions: [{ text: "Priya is a responsive reviewer.", confidence: 0.7 }]
      })
      const response = yield* server.request("POST", `${bank("grouped")}/reflect`, {
        json: { query: "Is Priya responsive?", tag_groups: [{ tags: ["team-x"] }] }
      })
      assert.strictEqual(response.status, 200, response.text)
      const opinion = yield* eventually(
        server.request("GET", `${bank("grouped")}/memories/list?type=opinion`),
        (r) => r.body.items.length === 1
      ).pipe(Effect.map((r) => r.body.items[0]))
      assert.strictEqual(opinion.text, "Priya is a responsive reviewer.")
      // Untagged, it would surface in every scope of the bank, including ones the reflect never read.
      assert.deepStrictEqual(opinion.tags, ["team-x"])
    }))

  it.effect("a reflect operation that runs again (crash, retry) queues its form_opinion only once", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      yield* retain("rerun", [{ content: "The bakery on Elm Street opens at six." }])
      replies.decisions.push({ tool: "answer", query: null, answer: "At six." })
      const submitted = yield* server.request("POST", `${bank("rerun")}/reflect/submit`, {
        json: { query: "When does the bakery open?" }
      })
      const id = submitted.body.operation_id
      const status = server.request("GET", `${bank("rerun")}/operations/${id}`)
      const formOpinions = Effect.map(
        server.request("GET", `${bank("rerun")}/operations?task_type=form_opinion`),
        (r) => r.body.total as number
      )
      yield* eventually(status, (r) => r.body.status === "completed")
      assert.strictEqual(yield* formOpinions, 1)
      // As if the process had died after queueing form_opinion but before recording the reflect's result.
      yield* sql`UPDATE operations SET status = 'failed', error_message = 'the process died' WHERE id = ${id}`
      replies.decisions.push({ tool: "answer", query: null, answer: "At six in the morning." })
      const retried = yield* server.request("POST", `${bank("rerun")}/operations/${id}/retry`)
      assert.strictEqual(retried.status, 200, retried.text)
      yield* eventually(status, (r) => r.body.status === "completed")
      const result = yield* server.request("GET", `${bank("rerun")}/operations/${id}/result`)
      assert.strictEqual(result.body.result.text, "At six in the morning.")
      assert.strictEqual(yield* formOpinions, 1)
    }))

  it.effect("reinforcement reads only facts up to the watermark it records", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const store = yield* OpinionStore
      const embeddings = yield* Embeddings
      yield* retain("watermark", [
        { content: "Lena fixed the build server on Monday." },
        { content: "Lena fixed the build server again on Friday." }
      ])
      const facts = yield* sql<{ id: string; seq: number }>`
        SELECT id, seq::float8 AS seq FROM memory_units
        WHERE bank_id = 'watermark' AND fact_type IN ('world', 'experience') ORDER BY seq`
      const text = "Lena keeps the build server running."
      const [vector] = yield* embeddings.embedDocuments([text])
      yield* store.insert({
        id: "watermark-opinion",
        bankId: "watermark",
        text,
        confidence: 0.5,
        contentHash: "watermark-opinion",
        sourceFactIds: [],
        tags: [],
        operationId: "watermark-test",
        embedding: vector!,
        embeddingModel: modelKey(embeddings.identity),
        mentionedAt: new Date()
      })
      const first = facts[0]!
      const upToFirst = yield* store.relatedFacts("watermark", "watermark-opinion", 0, first.seq, 10)
      assert.deepStrictEqual(upToFirst.map((fact) => fact.id), [first.id])
      const all = yield* store.relatedFacts("watermark", "watermark-opinion", 0, facts.at(-1)!.seq, 10)
      assert.sameMembers(all.map((fact) => fact.id), facts.map((fact) => fact.id))
    }))

  it.effect("a model that cannot produce a search action is asked for the answer in prose", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("prose", [{ content: "The spare key is under the blue flowerpot." }])
      replies.decisions.push("I think I should look around first.", "Still not JSON, sorry.")
      replies.answers.push("Under the blue flowerpot.")
      const response = yield* server.request("POST", `${bank("prose")}/reflect`, {
        json: { query: "Where is the spare key?", include: { tool_calls: {} } }
      })
      assert.strictEqual(response.status, 200, response.text)
      assert.strictEqual(response.body.text, "Under the blue flowerpot.")
      assert.deepStrictEqual(response.body.trace.llm_calls.map((call: any) => call.scope), [
        "reflect.decide",
        "reflect.answer"
      ])
    }))

  it.effect("reflect/submit runs as a reflect operation whose result is the response", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("queued", [{ content: "The office moves to Utrecht in May." }])
      replies.decisions.push({ tool: "answer", query: null, answer: "To Utrecht, in May." })
      const submitted = yield* server.request("POST", `${bank("queued")}/reflect/submit`, {
        json: { query: "Where does the office move?", include: { facts: {} } }
      })
      assert.strictEqual(submitted.status, 200, submitted.text)
      assert.strictEqual(submitted.body.status, "pending")
      const id = submitted.body.operation_id
      const done = yield* eventually(
        server.request("GET", `${bank("queued")}/operations/${id}`),
        (r) => r.body.status === "completed"
      )
      assert.strictEqual(done.body.task_type, "reflect")
      const result = yield* server.request("GET", `${bank("queued")}/operations/${id}/result`)
      assert.strictEqual(result.body.result.text, "To Utrecht, in May.")
      assert.isTrue(
        hasText(result.body.result.based_on.memories.map((m: any) => m.text), "The office moves to Utrecht in May.")
      )
    }))

  it.effect("bad input is a 400 naming the field; an unknown bank is a 404", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("strict", [{ content: "Anything at all." }])
      const fieldsOf = (path: string, json: unknown) =>
        Effect.map(server.request("POST", path, { json }), (response) => {
          assert.strictEqual(response.status, 400, response.text)
          return response.body.errors.map((issue: any) => issue.field)
        })
      for (const path of [`${bank("strict")}/reflect`, `${bank("strict")}/reflect/submit`]) {
        assert.include(yield* fieldsOf(path, { query: "q", response_schema: "an object please" }), "response_schema")
        assert.include(yield* fieldsOf(path, { query: "q", response_schema: [1, 2] }), "response_schema")
        assert.include(
          yield* fieldsOf(path, { query: "q", response_schema: { type: "array", contains: { type: "string" } } }),
          "response_schema"
        )
        assert.include(yield* fieldsOf(path, { query: "q", tags: ["a"], tag_groups: [{ tags: ["b"] }] }), "tag_groups")
        assert.include(yield* fieldsOf(path, { query: "q", budget: "huge" }), "budget")
        assert.include(yield* fieldsOf(path, { query: "q", max_tokens: 0 }), "max_tokens")
        assert.include(yield* fieldsOf(path, { query: "  " }), "query")
        assert.include(
          yield* fieldsOf(path, { query: "q", include: { tool_calls: { output: "yes" } } }),
          "include.tool_calls.output"
        )
      }
      const missing = yield* server.request("POST", `${bank("never-created")}/reflect`, { json: { query: "q" } })
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "never-created")
    }))

  it.effect("a provider outage is a 503 with a clear message", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("outage", [{ content: "The printer on floor 2 is broken." }])
      replies.outage = true
      const response = yield* server.request("POST", `${bank("outage")}/reflect`, {
        json: { query: "What is broken?" }
      })
      replies.outage = false
      assert.strictEqual(response.status, 503, response.text)
      assert.include(response.body.detail, "language model")
    }))
})
