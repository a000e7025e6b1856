/**
 * The Anthropic Messages and Gemini generateContent wire formats against the scripted server: where the key
 * goes, how the system prompt and structured output are sent, and how answers and usage are read back.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { toGeminiSchema } from "../../../../layers/models/llm/GeminiGenerate.ts"
import { scriptedOpenAi } from "../../../support/ScriptedOpenAi.ts"
import { makeLlm, request } from "./support.ts"

const Person = Schema.Struct({
  name: Schema.String,
  city: Schema.NullOr(Schema.String),
  age: Schema.optionalKey(Schema.Int)
})
const objectRequest = { ...request("Ann, 31, lives in Oslo."), schema: Person, objectName: "person" }

describe("Anthropic Messages", () => {
  it.live("sends the key, version, system prompt and max_tokens; reads text and usage", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({
        provider: "anthropic",
        baseUrl: `${server.origin}/v1`,
        apiKey: "ak-1",
        model: "claude-x"
      })
      server.script({ content: "Oslo.", usage: { prompt_tokens: 21, completion_tokens: 3 } })
      const result = yield* llm.generateText(request("Where does Ann live?"))
      assert.strictEqual(result.text, "Oslo.")
      assert.deepStrictEqual(result.usage, { inputTokens: 21, outputTokens: 3, totalTokens: 24 })
      const sent = server.modelRequests()[0]!
      assert.strictEqual(sent.path, "/v1/messages")
      assert.strictEqual(sent.headers["x-api-key"], "ak-1")
      assert.strictEqual(sent.headers["anthropic-version"], "2023-06-01")
      assert.isUndefined(sent.headers["authorization"])
      assert.strictEqual(sent.body.model, "claude-x")
      assert.strictEqual(sent.body.system, "You extract facts.")
      assert.deepStrictEqual(sent.body.messages, [{ role: "user", content: "Where does Ann live?" }])
      assert.strictEqual(sent.body.max_tokens, 8192)
    }).pipe(Effect.scoped))

  it.live("structured output: schema in the system prompt by default, output_format in json_schema mode", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const prompted = yield* makeLlm({ provider: "anthropic", baseUrl: `${server.origin}/v1`, apiKey: "ak-1" })
      server.script({ content: "Here you go: {\"name\": \"Ann\", \"city\": \"Oslo\", \"age\": 31}" })
      const first = yield* prompted.llm.generateObject(objectRequest)
      assert.deepStrictEqual(first.value, { name: "Ann", city: "Oslo", age: 31 })
      assert.include(server.modelRequests()[0]!.body.system, "JSON Schema")
      assert.isUndefined(server.modelRequests()[0]!.body.output_format)

      const native = yield* makeLlm({
        provider: "anthropic",
        baseUrl: `${server.origin}/v1`,
        apiKey: "ak-1",
        structuredOutput: "json_schema"
      })
      // Anthropic's strict schema makes optional fields required and nullable; null decodes back to absent.
      server.script({ content: "{\"name\": \"Ann\", \"city\": null, \"age\": null}" })
      const second = yield* native.llm.generateObject(objectRequest)
      assert.deepStrictEqual(second.value, { name: "Ann", city: null })
      const sent = server.modelRequests()[1]!
      assert.strictEqual(sent.headers["anthropic-beta"], "structured-outputs-2025-11-13")
      assert.strictEqual(sent.body.output_format.type, "json_schema")
      assert.deepStrictEqual(sent.body.output_format.schema.required, ["name", "city", "age"])
      assert.isFalse(sent.body.output_format.schema.additionalProperties)
    }).pipe(Effect.scoped))
})

describe("Gemini generateContent", () => {
  it.live("puts the key in a header (never the URL), maps roles, reads text and usage", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const key = "AIzaSyTestKey0000000000"
      const { llm } = yield* makeLlm({
        provider: "gemini",
        baseUrl: `${server.origin}/v1beta`,
        apiKey: key,
        model: "gemini-test"
      })
      server.script({ content: "Oslo.", usage: { prompt_tokens: 8, completion_tokens: 2 } })
      const result = yield* llm.generateText({
        ...request("Where?"),
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Ann lives in Oslo." },
          { role: "assistant", content: "Noted." },
          { role: "user", content: "Where?" }
        ],
        maxOutputTokens: 64
      })
      assert.strictEqual(result.text, "Oslo.")
      assert.deepStrictEqual(result.usage, { inputTokens: 8, outputTokens: 2, totalTokens: 10 })
      const sent = server.modelRequests()[0]!
      assert.strictEqual(sent.path, "/v1beta/models/gemini-test:generateContent")
      assert.strictEqual(sent.headers["x-goog-api-key"], key)
      assert.deepStrictEqual(sent.body.systemInstruction, { parts: [{ text: "Be brief." }] })
      assert.deepStrictEqual(sent.body.contents.map((c: any) => c.role), ["user", "model", "user"])
      assert.strictEqual(sent.body.generationConfig.maxOutputTokens, 64)
    }).pipe(Effect.scoped))

  it.live("structured output sends responseMimeType and an OpenAPI-subset responseSchema", () =>
    Effect.gen(function*() {
      const server = yield* scriptedOpenAi
      const { llm } = yield* makeLlm({
        provider: "gemini",
        baseUrl: `${server.origin}/v1beta`,
        apiKey: "AIzaSyTestKey0000000000"
      })
      server.script({ content: "{\"name\": \"Ann\", \"city\": \"Oslo\"}" })
      const result = yield* llm.generateObject(objectRequest)
      assert.deepStrictEqual(result.value, { name: "Ann", city: "Oslo" })
      const config = server.modelRequests()[0]!.body.generationConfig
      assert.strictEqual(config.responseMimeType, "application/json")
      assert.deepStrictEqual(config.responseSchema.properties.city, { type: "string", nullable: true })
      assert.deepStrictEqual(config.responseSchema.required, ["name", "city"])
      assert.isUndefined(config.responseSchema.additionalProperties)
    }).pipe(Effect.scoped))

  it("translates JSON Schema references and unions into Gemini's subset", () => {
    const translated = toGeminiSchema({
      type: "object",
      properties: {
        tags: { type: "array", items: { $ref: "#/$defs/Tag" } },
        kind: { const: "fact" },
        note: { type: ["string", "null"] }
      },
      required: ["tags"],
      additionalProperties: false,
      $defs: { Tag: { type: "string", enum: ["a", "b"], pattern: "^[ab]$" } }
    })
    assert.deepStrictEqual(translated, {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
        kind: { enum: ["fact"] },
        note: { type: "string", nullable: true }
      },
      required: ["tags"]
    })
  })
})
