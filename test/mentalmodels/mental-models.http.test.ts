/**
 * Mental models over HTTP. Offline (no language model): validation names the field, content is generated in the
 * background from the offline reflect synthesis, lists filter by tags, a delta falls back to full and says why,
 * consolidation events refresh the models that ask for it, and a LoCoMo conversation yields a useful model.
 * Against a scripted OpenAI-compatible server: a model is created, refreshed fully and by delta (the prompt
 * carries the current document and only the new facts), and its history lists both.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { llmSettings } from "../../layers/models/llm/LlmConfig.ts"
import { BankEvents } from "../../src/events/BankEvents.ts"
import { OperationStore } from "../../src/bank/OperationStore.ts"
import { TaskRegistry } from "../../src/bank/TaskRegistry.ts"
import { loadLocomo, locomoAvailable, sessionsOf } from "../support/Locomo.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { Scripted, scriptedApp, scriptedModels } from "../support/ScriptedLlm.ts"

const bank = (id: string) => `/v1/default/banks/${id}`
const models = (id: string) => `${bank(id)}/mental-models`

/** Waits until the operation settles and returns its detail. */
const settled = (bankId: string, operationId: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* eventually(
      server.request("GET", `${bank(bankId)}/operations/${operationId}`),
      (response) => ["completed", "failed"].includes(response.body?.status)
    )
  })

const retain = (bankId: string, contents: ReadonlyArray<string>, tags?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `${bank(bankId)}/memories`, {
      json: { items: contents.map((content) => ({ content, ...(tags ? { tags } : {}) })) }
    })
    assert.strictEqual(response.status, 200, response.text)
  })

const fieldsOf = (body: any): Array<string> => body.errors.map((error: any) => error.field)

layer(testApp({ operationRetryBase: Duration.millis(5) }), { excludeTestServices: true })(
  "mental models offline",
  (it) => {
    it.effect("bad input is a 400 naming the field; unknown banks and models are 404; ids are unique", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-validate"), { json: {} })
        const capitals = yield* server.request("POST", models("mm-validate"), {
          json: { id: "Team-Prefs", name: "Team", source_query: "What does the team prefer?" }
        })
        assert.strictEqual(capitals.status, 400)
        assert.deepStrictEqual(fieldsOf(capitals.body), ["id"])
        assert.include(capitals.body.detail, "lowercase")

        const tooSmall = yield* server.request("POST", models("mm-validate"), {
          json: { name: "Team", source_query: "What does the team prefer?", max_tokens: 100 }
        })
        assert.strictEqual(tooSmall.status, 400)
        assert.deepStrictEqual(fieldsOf(tooSmall.body), ["max_tokens"])

        const tooLarge = yield* server.request("PATCH", `${models("mm-validate")}/anything`, {
          json: { max_tokens: 9000 }
        })
        assert.strictEqual(tooLarge.status, 400)
        assert.deepStrictEqual(fieldsOf(tooLarge.body), ["max_tokens"])

        const missing = yield* server.request("POST", models("mm-validate"), { json: { name: "No query" } })
        assert.strictEqual(missing.status, 400)
        assert.deepStrictEqual(fieldsOf(missing.body), ["source_query"])

        const badMode = yield* server.request("POST", models("mm-validate"), {
          json: { name: "Team", source_query: "q", trigger: { mode: "sometimes" } }
        })
        assert.deepStrictEqual(fieldsOf(badMode.body), ["trigger.mode"])

        const badLimit = yield* server.request("GET", `${models("mm-validate")}?limit=0`)
        assert.strictEqual(badLimit.status, 400)
        assert.deepStrictEqual(fieldsOf(badLimit.body), ["limit"])
        const badMatch = yield* server.request("GET", `${models("mm-validate")}?tags_match=some`)
        assert.deepStrictEqual(fieldsOf(badMatch.body), ["tags_match"])

        const noBank = yield* server.request("POST", models("mm-nobody"), { json: { name: "x", source_query: "y" } })
        assert.strictEqual(noBank.status, 404)
        assert.include(noBank.body.detail, "mm-nobody")
        const noModel = yield* server.request("GET", `${models("mm-validate")}/not-there`)
        assert.strictEqual(noModel.status, 404)
        assert.include(noModel.body.detail, "not-there")
        for (const [method, suffix] of [["DELETE", ""], ["GET", "/history"], ["POST", "/refresh"]] as const) {
          const response = yield* server.request(method, `${models("mm-validate")}/not-there${suffix}`)
          assert.strictEqual(response.status, 404, `${method} ${suffix}`)
        }

        const first = yield* server.request("POST", models("mm-validate"), {
          json: { id: "team-prefs", name: "Team", source_query: "What does the team prefer?" }
        })
        assert.strictEqual(first.status, 200, first.text)
        assert.strictEqual(first.body.mental_model_id, "team-prefs")
        const again = yield* server.request("POST", models("mm-validate"), {
          json: { id: "team-prefs", name: "Other", source_query: "Something else?" }
        })
        assert.strictEqual(again.status, 409)
        assert.include(again.body.detail, "team-prefs")
      }))

    it.effect("content is generated in the background by the offline reflect synthesis, with based_on and history", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-offline"), { json: {} })
        yield* retain("mm-offline", [
          "Priya prefers green tea over coffee in the morning.",
          "Priya drinks green tea with honey after lunch.",
          "The office coffee machine broke on Tuesday."
        ])
        const created = yield* server.request("POST", models("mm-offline"), {
          json: { name: "Priya's drinks", source_query: "What does Priya like to drink?" }
        })
        assert.strictEqual(created.status, 200, created.text)
        // No id given: a readable one is made from the name.
        assert.strictEqual(created.body.mental_model_id, "priya-s-drinks")
        const operation = yield* settled("mm-offline", created.body.operation_id)
        assert.strictEqual(operation.body.status, "completed", operation.body.error_message)
        assert.strictEqual(operation.body.task_type, "refresh_mental_model")

        const model = yield* server.request("GET", `${models("mm-offline")}/priya-s-drinks`)
        assert.strictEqual(model.status, 200)
        assert.include(model.body.content.toLowerCase(), "green tea")
        assert.strictEqual(model.body.max_tokens, 2048)
        assert.deepStrictEqual(model.body.trigger, {
          mode: "full",
          refresh_after_consolidation: false,
          keep_trace: false,
          response_schema: null
        })
        assert.isString(model.body.last_refreshed_at)
        assert.strictEqual(model.body.reflect_response.text, model.body.content)
        const basedOn = model.body.reflect_response.based_on.memories.map((memory: any) => memory.text).join(" ")
        assert.include(basedOn, "green tea")

        const history = yield* server.request("GET", `${models("mm-offline")}/priya-s-drinks/history`)
        assert.strictEqual(history.body.length, 1)
        assert.strictEqual(history.body[0].mode, "full")
        assert.strictEqual(history.body[0].reason, "created")
        assert.isNull(history.body[0].previous_content)
        assert.strictEqual(history.body[0].content, model.body.content)
        assert.strictEqual(history.body[0].operation_id, created.body.operation_id)

        // A crash after the refresh was saved re-runs the operation: it finds its own refresh and does nothing more.
        const registry = yield* TaskRegistry
        const store = yield* OperationStore
        const handler = (yield* registry.get("refresh_mental_model"))!
        const record = Option.getOrThrow(yield* store.find("mm-offline", created.body.operation_id))
        const rerun = (yield* handler(record)) as any
        assert.strictEqual(rerun.mental_model_id, "priya-s-drinks")
        assert.strictEqual(rerun.mode, "full")
        const again = yield* server.request("GET", `${models("mm-offline")}/priya-s-drinks/history`)
        assert.strictEqual(again.body.length, 1)
      }))

    it.effect("a model with tags reads only memories carrying all of its tags", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-tags"), { json: {} })
        yield* retain("mm-tags", ["Project Atlas ships its first release in May."], ["atlas"])
        yield* retain("mm-tags", ["Project Borealis ships its first release in June."], ["borealis"])
        const created = yield* server.request("POST", models("mm-tags"), {
          json: {
            id: "atlas-dates",
            name: "Atlas dates",
            source_query: "When does the project ship its first release?",
            tags: ["atlas"]
          }
        })
        yield* settled("mm-tags", created.body.operation_id)
        const model = yield* server.request("GET", `${models("mm-tags")}/atlas-dates`)
        assert.include(model.body.content, "Atlas")
        assert.notInclude(model.body.content, "Borealis")
        const cited = model.body.reflect_response.based_on.memories.map((memory: any) => memory.text).join(" ")
        assert.notInclude(cited, "Borealis")
      }))

    it.effect("a delta refresh without a language model regenerates in full and records why", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-delta-offline"), { json: {} })
        yield* retain("mm-delta-offline", ["The release train leaves every second Thursday."])
        const created = yield* server.request("POST", models("mm-delta-offline"), {
          json: {
            id: "releases",
            name: "Releases",
            source_query: "When do releases happen?",
            trigger: { mode: "delta" }
          }
        })
        yield* settled("mm-delta-offline", created.body.operation_id)
        yield* retain("mm-delta-offline", ["From March the release train leaves every Monday instead."])
        const refresh = yield* server.request("POST", `${models("mm-delta-offline")}/releases/refresh`)
        assert.strictEqual(refresh.status, 200, refresh.text)
        assert.strictEqual(refresh.body.status, "pending")
        const done = yield* settled("mm-delta-offline", refresh.body.operation_id)
        assert.strictEqual(done.body.status, "completed", done.body.error_message)

        const history = yield* server.request("GET", `${models("mm-delta-offline")}/releases/history`)
        assert.deepStrictEqual(history.body.map((entry: any) => [entry.requested_mode, entry.mode, entry.reason]), [
          ["delta", "full", "manual"],
          ["delta", "full", "created"]
        ])
        assert.strictEqual(history.body[1].fallback_reason, "the model has no content yet")
        assert.include(history.body[0].fallback_reason, "language model")
        assert.include(history.body[0].content, "Monday")
        assert.strictEqual(history.body[0].previous_content, history.body[1].content)
      }))

    it.effect("lists filter by tags (any, all, exact) and page; update merges fields; delete removes the history", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-list"), { json: {} })
        const create = (id: string, tags: ReadonlyArray<string>) =>
          server.request("POST", models("mm-list"), { json: { id, name: id, source_query: `About ${id}?`, tags } })
        for (const [id, tags] of [["a", ["work"]], ["b", ["work", "team"]], ["c", ["home"]], ["d", []]] as const) {
          const response = yield* create(id, tags)
          assert.strictEqual(response.status, 200, response.text)
        }
        const ids = (query: string) =>
          server.request("GET", `${models("mm-list")}${query}`).pipe(
            Effect.map((response) => response.body.items.map((item: any) => item.id))
          )
        assert.deepStrictEqual(yield* ids(""), ["a", "b", "c", "d"])
        assert.deepStrictEqual(yield* ids("?tags=work"), ["a", "b"])
        assert.deepStrictEqual(yield* ids("?tags=work&tags=home"), ["a", "b", "c"])
        assert.deepStrictEqual(yield* ids("?tags=work&tags=team&tags_match=all"), ["b"])
        assert.deepStrictEqual(yield* ids("?tags=work&tags_match=exact"), ["a"])
        assert.deepStrictEqual(yield* ids("?limit=2&offset=1"), ["b", "c"])

        const updated = yield* server.request("PATCH", `${models("mm-list")}/a`, {
          json: { name: "Work notes", tags: ["work", "notes"], trigger: { refresh_after_consolidation: true } }
        })
        assert.strictEqual(updated.status, 200, updated.text)
        assert.strictEqual(updated.body.name, "Work notes")
        assert.strictEqual(updated.body.source_query, "About a?")
        assert.deepStrictEqual(updated.body.tags, ["work", "notes"])
        assert.deepStrictEqual(updated.body.trigger, {
          mode: "full",
          refresh_after_consolidation: true,
          keep_trace: false,
          response_schema: null
        })
        assert.deepStrictEqual(yield* ids("?tags=notes"), ["a"])

        const deleted = yield* server.request("DELETE", `${models("mm-list")}/a`)
        assert.strictEqual(deleted.status, 200)
        assert.strictEqual(deleted.body.success, true)
        assert.strictEqual((yield* server.request("GET", `${models("mm-list")}/a`)).status, 404)
        assert.strictEqual((yield* server.request("GET", `${models("mm-list")}/a/history`)).status, 404)
        assert.deepStrictEqual(yield* ids(""), ["b", "c", "d"])
      }))

    it.effect("a consolidation that changed observations refreshes the models that ask for it, once per burst", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const events = yield* BankEvents
        // Observations off: the events below are the only consolidations this bank sees.
        yield* server.request("PUT", bank("mm-consolidation"), { json: { enable_observations: false } })
        yield* retain("mm-consolidation", ["Noor moved to Lisbon in May."])
        const watching = yield* server.request("POST", models("mm-consolidation"), {
          json: {
            id: "noor",
            name: "Noor",
            source_query: "Where does Noor live?",
            trigger: { refresh_after_consolidation: true }
          }
        })
        const ignoring = yield* server.request("POST", models("mm-consolidation"), {
          json: { id: "other", name: "Other", source_query: "Where does Noor live?" }
        })
        yield* settled("mm-consolidation", watching.body.operation_id)
        yield* settled("mm-consolidation", ignoring.body.operation_id)
        const historyOf = (id: string) =>
          server.request("GET", `${models("mm-consolidation")}/${id}/history`).pipe(
            Effect.map((response) => response.body)
          )

        const refreshOperations = server.request(
          "GET",
          `${bank("mm-consolidation")}/operations?task_type=refresh_mental_model`
        )
          .pipe(Effect.map((response) => response.body.operations.length))
        // Listeners run inside emit: once it returns, any refresh it queues is already stored.
        yield* events.emit("mm-consolidation", "consolidation.completed", {
          observations_created: 0,
          observations_updated: 0
        })
        assert.strictEqual(yield* refreshOperations, 2)
        yield* events.emit("mm-consolidation", "consolidation.completed", { observations_created: 2 })
        assert.strictEqual(yield* refreshOperations, 3)
        yield* events.emit("mm-consolidation", "consolidation.completed", { observations_created: 1 })
        const refreshed = yield* eventually(historyOf("noor"), (history) => history.length >= 2)
        assert.strictEqual(refreshed[0].reason, "consolidation")
        const operations = yield* server.request(
          "GET",
          `${bank("mm-consolidation")}/operations?task_type=refresh_mental_model`
        )
        yield* Effect.forEach(operations.body.operations, (operation: any) => settled("mm-consolidation", operation.id))
        // Two events with changes while the first refresh waited: at most one refresh each, never one per model per event.
        const after = yield* historyOf("noor")
        assert.isAtMost(after.length, 3)
        assert.strictEqual((yield* historyOf("other")).length, 1)
      }))

    it.effect("retained facts reach a refresh_after_consolidation model through consolidation", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank("mm-pipeline"), { json: { enable_observations: true } })
        const created = yield* server.request("POST", models("mm-pipeline"), {
          json: {
            id: "noor",
            name: "Noor",
            source_query: "Where does Noor live?",
            trigger: { refresh_after_consolidation: true }
          }
        })
        yield* settled("mm-pipeline", created.body.operation_id)
        yield* retain("mm-pipeline", ["Noor moved to Porto in June."])
        const history = yield* eventually(
          server.request("GET", `${models("mm-pipeline")}/noor/history`).pipe(Effect.map((response) => response.body)),
          (entries) => entries.some((entry: any) => entry.reason === "consolidation" && entry.content.includes("Porto"))
        )
        assert.strictEqual(history.at(-1).reason, "created")
      }))

    it.effect.skipIf(!locomoAvailable)(
      "a LoCoMo conversation yields a model that answers from the conversation",
      () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          yield* server.request("PUT", bank("mm-locomo"), { json: {} })
          const sample = loadLocomo()[0]!
          for (const session of sessionsOf(sample).slice(0, 3)) {
            const response = yield* server.request("POST", `${bank("mm-locomo")}/memories`, {
              json: { items: session.items }
            })
            assert.strictEqual(response.status, 200, response.text)
          }
          const speaker = sample.conversation.speaker_a
          const created = yield* server.request("POST", models("mm-locomo"), {
            json: { name: `${speaker}'s support network`, source_query: `What support group does ${speaker} go to?` }
          })
          const done = yield* settled("mm-locomo", created.body.operation_id)
          assert.strictEqual(done.body.status, "completed", done.body.error_message)
          const model = yield* server.request("GET", `${models("mm-locomo")}/${created.body.mental_model_id}`)
          // Caroline's LGBTQ support group is the conversation's first topic (D1:3).
          assert.match(model.body.content, /support group/i)
          assert.isAbove(model.body.reflect_response.based_on.memories.length, 0)
        }),
      120_000
    )
  }
)

// Only reflect (and so mental models) talks to the scripted model; retain extracts offline.
const scriptedLlm = scriptedModels((server) =>
  llmSettings({
    provider: "openai",
    baseUrl: server.baseUrl,
    model: "scripted",
    maxRetries: 0,
    timeout: "5 seconds",
    purposes: { retain: { provider: "none" }, consolidation: { provider: "none" } }
  })
)

const withModels = scriptedApp({ operationRetryBase: Duration.millis(5), operationMaxAttempts: 1 }, scriptedLlm)

const formatOf = (body: any): string | undefined => body?.response_format?.json_schema?.name
const promptOf = (body: any): string => (body?.messages ?? []).map((message: any) => message.content).join("\n")

layer(withModels, { excludeTestServices: true })("mental models with a language model", (it) => {
  it.effect(
    "created, refreshed fully and by delta; the delta edits only what new facts contradict; history lists both",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const scripted = yield* Scripted
        let answers = 0
        // Reflect asks for an action (answer at once) and the delta asks for the edited document: both are scripted.
        scripted.setFallback((body) => {
          if (formatOf(body) === "reflect_action") {
            answers++
            const answer = answers === 1
              ? "## Schedule\n- Standup is at 9:30.\n\n## Tools\n- The team uses Linear for tickets."
              : "## Schedule\n- Standup is at 9:30.\n\n## Tools\n- The team uses Linear for tickets.\n- Deploys go through Argo."
            return { content: JSON.stringify({ tool: "answer", query: null, answer }) }
          }
          if (formatOf(body) === "mental_model_delta") {
            return {
              content: JSON.stringify({
                content:
                  "## Schedule\n- Standup is at 10:00.\n\n## Tools\n- The team uses Linear for tickets.\n- Deploys go through Argo.",
                changes: ["Standup moved from 9:30 to 10:00"]
              }),
              usage: { prompt_tokens: 300, completion_tokens: 60 }
            }
          }
          return { status: 500 }
        })
        // Observations off: what counts as new is exactly what this test retains, not also what consolidation writes.
        yield* server.request("PUT", bank("mm-llm"), { json: { enable_observations: false } })
        yield* retain("mm-llm", ["The daily standup is at 9:30.", "The team tracks tickets in Linear."])
        const created = yield* server.request("POST", models("mm-llm"), {
          json: { id: "team-habits", name: "Team habits", source_query: "How does the team work?", max_tokens: 512 }
        })
        assert.strictEqual(created.status, 200, created.text)
        const first = yield* settled("mm-llm", created.body.operation_id)
        assert.strictEqual(first.body.status, "completed", first.body.error_message)
        const initial = yield* server.request("GET", `${models("mm-llm")}/team-habits`)
        assert.include(initial.body.content, "Standup is at 9:30")

        // Full refresh: reflect runs again and its answer replaces the content.
        const full = yield* server.request("POST", `${models("mm-llm")}/team-habits/refresh`)
        assert.strictEqual((yield* settled("mm-llm", full.body.operation_id)).body.status, "completed")
        const afterFull = yield* server.request("GET", `${models("mm-llm")}/team-habits`)
        assert.include(afterFull.body.content, "Deploys go through Argo")

        // Delta refresh: only the facts learned since, with the current document, reach the model.
        const switched = yield* server.request("PATCH", `${models("mm-llm")}/team-habits`, {
          json: { trigger: { mode: "delta" } }
        })
        assert.deepStrictEqual(switched.body.trigger, {
          mode: "delta",
          refresh_after_consolidation: false,
          keep_trace: false,
          response_schema: null
        })
        yield* retain("mm-llm", ["From next week the standup moves to 10:00."])
        const delta = yield* server.request("POST", `${models("mm-llm")}/team-habits/refresh`)
        const deltaDone = yield* settled("mm-llm", delta.body.operation_id)
        assert.strictEqual(deltaDone.body.status, "completed", deltaDone.body.error_message)
        const deltaRequest = scripted.chatRequests().find((request) => formatOf(request.body) === "mental_model_delta")!
        const deltaPrompt = promptOf(deltaRequest.body)
        assert.include(deltaPrompt, "How does the team work?")
        assert.include(deltaPrompt, "Deploys go through Argo")
        assert.include(deltaPrompt, "standup moves to 10:00")
        assert.notInclude(deltaPrompt, "tracks tickets in Linear")

        const afterDelta = yield* server.request("GET", `${models("mm-llm")}/team-habits`)
        assert.include(afterDelta.body.content, "Standup is at 10:00")
        assert.include(afterDelta.body.content, "Deploys go through Argo")
        const cited = afterDelta.body.reflect_response.based_on.memories.map((memory: any) => memory.text)
        assert.include(cited.join(" "), "standup moves to 10:00")
        const result = yield* server.request("GET", `${bank("mm-llm")}/operations/${delta.body.operation_id}/result`)
        assert.strictEqual(result.body.result.mode, "delta")
        assert.deepStrictEqual(result.body.result.usage, { input_tokens: 300, output_tokens: 60, total_tokens: 360 })

        const history = yield* server.request("GET", `${models("mm-llm")}/team-habits/history`)
        assert.deepStrictEqual(history.body.map((entry: any) => [entry.mode, entry.reason]), [
          ["delta", "manual"],
          ["full", "manual"],
          ["full", "created"]
        ])
        assert.deepStrictEqual(history.body[0].changes, ["Standup moved from 9:30 to 10:00"])
        assert.strictEqual(history.body[0].previous_content, afterFull.body.content)
        const texts = new Map((yield* server.request("GET", `${bank("mm-llm")}/memories/list`)).body.items
          .map((item: any) => [item.id, item.text]))
        const considered = history.body[0].new_fact_ids.map((id: string) => texts.get(id))
        assert.strictEqual(considered.length, 1)
        assert.include(considered[0], "standup moves to 10:00")
        assert.isNull(history.body[0].fallback_reason)

        // No new facts: a delta changes nothing and asks the model nothing.
        const deltaCalls = () =>
          scripted.chatRequests().filter((request) => formatOf(request.body) === "mental_model_delta").length
        const before = deltaCalls()
        const idle = yield* server.request("POST", `${models("mm-llm")}/team-habits/refresh`)
        yield* settled("mm-llm", idle.body.operation_id)
        assert.strictEqual(deltaCalls(), before)
        const idleHistory = yield* server.request("GET", `${models("mm-llm")}/team-habits/history`)
        assert.strictEqual(idleHistory.body[0].changed, false)

        // A changed source query makes the next delta a full regeneration.
        yield* server.request("PATCH", `${models("mm-llm")}/team-habits`, {
          json: { source_query: "How does the team ship?" }
        })
        const requery = yield* server.request("POST", `${models("mm-llm")}/team-habits/refresh`)
        yield* settled("mm-llm", requery.body.operation_id)
        const requeried = yield* server.request("GET", `${models("mm-llm")}/team-habits/history`)
        assert.strictEqual(requeried.body[0].mode, "full")
        assert.strictEqual(requeried.body[0].requested_mode, "delta")
        assert.strictEqual(requeried.body[0].fallback_reason, "the source query changed since the last refresh")
        assert.strictEqual(requeried.body[0].source_query, "How does the team ship?")
      }),
    60_000
  )

  it.effect(
    "response_schema: a refresh stores validated structured output; a delta dry run shows its edit and writes nothing",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const scripted = yield* Scripted
        scripted.setFallback((body) => {
          if (formatOf(body) === "reflect_action") {
            return {
              content: JSON.stringify({ tool: "answer", query: null, answer: "## Offices\n- Lena runs Berlin." })
            }
          }
          if (formatOf(body) === "mental_model_delta") {
            return {
              content: JSON.stringify({
                content: "## Offices\n- Omar runs Berlin.",
                changes: ["Omar took Berlin over from Lena"]
              })
            }
          }
          // The structured-output turn is plain text that must hold the JSON.
          return formatOf(body) === undefined ? { content: "{\"berlin_lead\": \"Lena\"}" } : { status: 500 }
        })
        yield* server.request("PUT", bank("mm-structured"), { json: { enable_observations: false } })
        yield* retain("mm-structured", ["Lena runs the Berlin office."])
        const schema = { type: "object", properties: { berlin_lead: { type: "string" } }, required: ["berlin_lead"] }
        const created = yield* server.request("POST", models("mm-structured"), {
          json: {
            id: "offices",
            name: "Offices",
            source_query: "Who runs which office?",
            trigger: { mode: "delta", keep_trace: true, response_schema: schema }
          }
        })
        assert.strictEqual(created.status, 200, created.text)
        const first = yield* settled("mm-structured", created.body.operation_id)
        assert.strictEqual(first.body.status, "completed", first.body.error_message)
        const model = (yield* server.request("GET", `${models("mm-structured")}/offices`)).body
        assert.deepStrictEqual(model.reflect_response.structured_output, { berlin_lead: "Lena" })
        const trace = model.reflect_response.trace
        assert.strictEqual(trace.effective_mode, "full")
        assert.strictEqual(trace.mode_fallback_reason, "no_baseline_content")
        assert.include(trace.llm_calls.map((call: any) => call.scope), "reflect.structure")

        yield* retain("mm-structured", ["Lena handed the Berlin office to Omar."])
        const history = (yield* server.request("GET", `${models("mm-structured")}/offices/history`)).body
        const dry = (yield* server.request("POST", `${models("mm-structured")}/offices/dry-run-refresh`)).body
        assert.strictEqual(dry.requested_mode, "delta")
        assert.strictEqual(dry.effective_mode, "delta")
        assert.isNull(dry.mode_fallback_reason)
        assert.strictEqual(dry.outcome, "content_written")
        assert.strictEqual(dry.preview_content, "## Offices\n- Omar runs Berlin.")
        assert.include(dry.diff, "\n-- Lena runs Berlin.\n+- Omar runs Berlin.\n")
        assert.deepStrictEqual(dry.delta_operations.applied, [{ description: "Omar took Berlin over from Lena" }])
        assert.strictEqual(dry.window.created_after, model.last_refreshed_at)
        assert.isAbove(dry.facts.retrieved.world ?? dry.facts.retrieved.experience ?? 0, 0)
        assert.deepStrictEqual((yield* server.request("GET", `${models("mm-structured")}/offices`)).body, model)
        assert.deepStrictEqual(
          (yield* server.request("GET", `${models("mm-structured")}/offices/history`)).body,
          history
        )
      }),
    60_000
  )

  it.effect(
    "a language model outage fails the refresh with a clear message and keeps the content",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const scripted = yield* Scripted
        scripted.setFallback((body) =>
          formatOf(body) === "reflect_action"
            ? { content: JSON.stringify({ tool: "answer", query: null, answer: "Lena runs the Berlin office." }) }
            : { status: 500 }
        )
        yield* server.request("PUT", bank("mm-outage"), { json: {} })
        yield* retain("mm-outage", ["Lena runs the Berlin office."])
        const created = yield* server.request("POST", models("mm-outage"), {
          json: { id: "offices", name: "Offices", source_query: "Who runs which office?", trigger: { mode: "delta" } }
        })
        yield* settled("mm-outage", created.body.operation_id)
        yield* retain("mm-outage", ["Lena handed the Berlin office to Omar."])
        scripted.setFallback({ status: 500, body: { error: { message: "upstream exploded" } } })
        const refresh = yield* server.request("POST", `${models("mm-outage")}/offices/refresh`)
        const failed = yield* settled("mm-outage", refresh.body.operation_id)
        assert.strictEqual(failed.body.status, "failed")
        assert.include(failed.body.error_message, "delta refresh")
        const model = yield* server.request("GET", `${models("mm-outage")}/offices`)
        assert.strictEqual(model.body.content, "Lena runs the Berlin office.")
        assert.strictEqual((yield* server.request("GET", `${models("mm-outage")}/offices/history`)).body.length, 1)
      }),
    60_000
  )
})
