/**
 * `LlmLive` over the OpenAI-compatible wire format against a scripted server: text and structured output,
 * repair of small-model answers, the corrective retry, transient-failure retries, fail-fast auth errors,
 * timeouts, offline mode, and one trace per request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Schema } from "effect"
import { scriptedOpenAi } from "../../../support/ScriptedOpenAi.ts"
import { makeLlm, request } from "./support.ts"

const Facts = Schema.Struct({ facts: Schema.Array(Schema.Struct({ text: Schema.String, confidence: Schema.Number })) })
const objectRequest = (content: string) => ({ ...request(content), schema: Facts, objectName: "facts" })
const valid = "{\"facts\": [{\"text\": \"Ann lives in Oslo\", \"confidence\": 0.9}]}"
const expected = { facts: [{ text: "Ann lives in Oslo", confidence: 0.9 }] }

describe("LlmLive (OpenAI-compatible)", () => {
  it.live("generates text with usage, sends model, messages and the key, and strips reasoning", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm, traces } = yield* makeLlm({
        provider: "openai",
        baseUrl: server.baseUrl,
        model: "m-1",
        apiKey: "sk-secret-1"
      })
      server.script({
        content: "<think>Oslo, surely</think>\nAnn lives in Oslo.",
        usage: { prompt_tokens: 12, completion_tokens: 7 }
      })
      const result = yield* llm.generateText({
        ...request("Where does Ann live?"),
        maxOutputTokens: 50,
        temperature: 0
      })
      assert.strictEqual(result.text, "Ann lives in Oslo.")
      assert.deepStrictEqual(result.usage, { inputTokens: 12, outputTokens: 7, totalTokens: 19 })
      const [sent] = server.chatRequests()
      assert.strictEqual(sent!.body.model, "m-1")
      assert.strictEqual(sent!.body.max_tokens, 50)
      assert.strictEqual(sent!.body.temperature, 0)
      assert.deepStrictEqual(sent!.body.messages.map((m: any) => m.role), ["system", "user"])
      assert.strictEqual(sent!.headers["authorization"], "Bearer sk-secret-1")
      assert.strictEqual(traces.length, 1)
      assert.include(traces[0]!, {
        status: "success",
        scope: "test.scope",
        provider: "openai",
        model: "m-1",
        attempt: 1
      })
      assert.strictEqual(traces[0]!.usage.totalTokens, 19)
      assert.include(traces[0]!.input, "Where does Ann live?")
      assert.strictEqual(llm.describe("retain"), "openai/m-1")
    }).pipe(Effect.scoped))

  it.live("structured output sends the JSON schema as a strict response format", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl })
      server.script({ content: valid })
      const result = yield* llm.generateObject(objectRequest("Ann moved to Oslo."))
      assert.deepStrictEqual(result.value, expected)
      const format = server.chatRequests()[0]!.body.response_format
      assert.strictEqual(format.type, "json_schema")
      assert.strictEqual(format.json_schema.name, "facts")
      assert.isTrue(format.json_schema.strict)
      assert.deepStrictEqual(format.json_schema.schema.required, ["facts"])
      assert.strictEqual(format.json_schema.schema.properties.facts.items.properties.text.type, "string")
    }).pipe(Effect.scoped))

  it.live("repairs what small models answer, without asking again", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl, structuredOutput: "prompt" })
      const answers = [
        `Here are the facts you asked for:\n${valid}\nHope this helps!`,
        `\`\`\`json\n${valid}\n\`\`\``,
        `<think>The user wants facts. {"facts": []} would be wrong.</think>\n${valid}`,
        "[{\"text\": \"Ann lives in Oslo\", \"confidence\": 0.9}]",
        "{\"facts\": [{\"text\": \"Ann lives in Oslo\", \"confidence\": 0.9,},],}"
      ]
      for (const answer of answers) {
        server.script({ content: answer })
        const result = yield* llm.generateObject(objectRequest("Ann moved to Oslo."))
        assert.deepStrictEqual(result.value, expected, answer)
      }
      assert.strictEqual(server.chatRequests().length, answers.length)
      const first = server.chatRequests()[0]!.body
      assert.isUndefined(first.response_format)
      assert.include(first.messages[0].content, "JSON Schema")
      assert.include(first.messages[0].content, "You extract facts.")
    }).pipe(Effect.scoped))

  it.live("an invalid answer gets one corrective retry that names the problem", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm, traces } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl })
      server.script(
        { content: "{\"facts\": [{\"text\": 42}]}", usage: { prompt_tokens: 10, completion_tokens: 4 } },
        { content: valid, usage: { prompt_tokens: 30, completion_tokens: 9 } }
      )
      const result = yield* llm.generateObject(objectRequest("Ann moved to Oslo."))
      assert.deepStrictEqual(result.value, expected)
      assert.deepStrictEqual(result.usage, { inputTokens: 40, outputTokens: 13, totalTokens: 53 })
      const retry = server.chatRequests()[1]!.body.messages
      assert.strictEqual(retry.at(-2).role, "assistant")
      assert.include(retry.at(-2).content, "42")
      assert.strictEqual(retry.at(-1).role, "user")
      assert.include(retry.at(-1).content, "Expected string")
      assert.include(retry.at(-1).content, "confidence")
      assert.deepStrictEqual(traces.map((trace) => [trace.status, trace.errorReason]), [
        ["error", "invalid_output"],
        ["success", undefined]
      ])
      assert.strictEqual(traces[0]!.usage.totalTokens, 14)
    }).pipe(Effect.scoped))

  it.live("persistent garbage fails with invalid_output after the one retry", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl })
      server.setFallback({ content: "I am sorry, I cannot produce JSON today." })
      const error = yield* Effect.flip(llm.generateObject(objectRequest("Ann moved to Oslo.")))
      assert.strictEqual(error.reason, "invalid_output")
      assert.isFalse(error.retryable)
      assert.include(error.message, "no JSON value")
      assert.strictEqual(server.chatRequests().length, 2)
    }).pipe(Effect.scoped))

  it.live("5xx and 429 are retried with backoff; every attempt is traced", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm, traces } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl, retryBase: "40 millis" })
      server.script({ status: 500 }, { status: 429 }, { content: "fine" })
      const started = yield* Clock.currentTimeMillis
      const result = yield* llm.generateText(request("hello"))
      assert.strictEqual(result.text, "fine")
      assert.strictEqual(server.chatRequests().length, 3)
      // Two backoffs of 40 ms then 80 ms, each jittered by at most ±20%.
      assert.isAtLeast((yield* Clock.currentTimeMillis) - started, 90)
      assert.deepStrictEqual(traces.map((trace) => [trace.attempt, trace.status, trace.errorReason]), [
        [1, "error", "provider"],
        [2, "error", "rate_limited"],
        [3, "success", undefined]
      ])
    }).pipe(Effect.scoped))

  it.live("gives up after the configured retries", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl, maxRetries: 2 })
      const error = yield* Effect.flip(llm.generateText(request("hello")))
      assert.strictEqual(error.reason, "provider")
      assert.isTrue(error.retryable)
      assert.strictEqual(server.chatRequests().length, 3)
    }).pipe(Effect.scoped))

  it.live("401 fails fast and never shows the key; other 4xx are not retried either", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const key = "sk-live-0123456789abcdef"
      const { llm, traces } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl, apiKey: key })
      server.script({
        status: 401,
        body: { error: { message: `Incorrect API key provided: ${key}. Or sk-liv***cdef.` } }
      })
      const error = yield* Effect.flip(llm.generateText(request("hello")))
      assert.strictEqual(error.reason, "provider")
      assert.isFalse(error.retryable)
      assert.include(error.message, "401")
      assert.notInclude(error.message, key)
      assert.notInclude(error.message, "sk-liv")
      assert.notInclude(JSON.stringify(traces), key)
      assert.strictEqual(server.chatRequests().length, 1)

      server.script({ status: 400, body: { error: { message: "model 'nope' not found" } } })
      const refused = yield* Effect.flip(llm.generateText(request("hello")))
      assert.include(refused.message, "model 'nope' not found")
      assert.strictEqual(server.chatRequests().length, 2)
    }).pipe(Effect.scoped))

  it.live("a hanging server times out, and the timeout is retried", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      // The server never answers, so the limit is always reached; it is long enough for each request to reach the
      // server first even on a starved machine (the count below is of requests the server saw).
      const { llm, traces } = yield* makeLlm({
        provider: "openai",
        baseUrl: server.baseUrl,
        timeout: "1 second",
        maxRetries: 1
      })
      server.setFallback({ hang: true })
      const error = yield* Effect.flip(llm.generateText(request("hello")))
      assert.strictEqual(error.reason, "timeout")
      assert.isTrue(error.retryable)
      assert.strictEqual(server.chatRequests().length, 2)
      assert.deepStrictEqual(traces.map((trace) => trace.errorReason), ["timeout", "timeout"])
    }).pipe(Effect.scoped))

  it.live("an unreachable server is a retryable provider error", () =>
    Effect.gen(function*() {
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: "http://127.0.0.1:9/v1", maxRetries: 1 })
      const error = yield* Effect.flip(llm.generateText(request("hello")))
      assert.strictEqual(error.reason, "provider")
      assert.isTrue(error.retryable)
      assert.include(error.message, "127.0.0.1:9")
    }))

  it.live("json_object mode asks for JSON mode and puts the schema in the prompt", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({ provider: "openai", baseUrl: server.baseUrl, structuredOutput: "json_object" })
      server.script({ content: valid })
      yield* llm.generateObject(objectRequest("Ann moved to Oslo."))
      const body = server.chatRequests()[0]!.body
      assert.deepStrictEqual(body.response_format, { type: "json_object" })
      assert.include(body.messages[0].content, "\"confidence\"")
    }).pipe(Effect.scoped))

  it.live("provider none: unavailable at once, no request, no trace", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm, traces } = yield* makeLlm({
        provider: "none",
        purposes: { reflect: { provider: "openai", baseUrl: server.baseUrl, model: "reflector" } }
      })
      assert.isFalse(llm.available("retain"))
      assert.strictEqual(llm.describe("retain"), "none")
      assert.isTrue(llm.available("reflect"))
      assert.strictEqual(llm.describe("reflect"), "openai/reflector")
      const error = yield* Effect.flip(llm.generateObject(objectRequest("x")))
      assert.strictEqual(error.reason, "unavailable")
      assert.isFalse(error.retryable)
      assert.strictEqual(server.requests.length, 0)
      assert.strictEqual(traces.length, 0)
      server.script({ content: "reflected" })
      const reflected = yield* llm.generateText(request("why?", { purpose: "reflect" }))
      assert.strictEqual(reflected.text, "reflected")
      assert.strictEqual(server.chatRequests()[0]!.body.model, "reflector")
    }).pipe(Effect.scoped))
})
