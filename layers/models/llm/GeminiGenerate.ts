/**
 * A `LanguageModel` over Google's Gemini `generateContent` API (key in the `x-goog-api-key` header, never in
 * the URL). Structured output uses `responseMimeType: application/json` with a `responseSchema` translated to
 * the OpenAPI subset Gemini accepts; the caller still validates against the full schema. One request per call.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { AiError, LanguageModel, type Response } from "effect/ai"
import { HttpClient } from "effect/http"
import type { ProviderSettings } from "./LlmConfig.ts"
import { postJson } from "./ProviderHttp.ts"
import type { ProviderModel } from "./ProviderParts.ts"
import {
  chatMessages,
  GenerationOptions,
  jsonInstruction,
  jsonSchemaOf,
  responseParts,
  splitSystem,
  streamOnce
} from "./ProviderParts.ts"

const GenerateResponse = Schema.Struct({
  candidates: Schema.optional(Schema.Array(Schema.Struct({
    content: Schema.optional(Schema.Struct({
      parts: Schema.optional(Schema.Array(Schema.Struct({
        text: Schema.optional(Schema.String),
        thought: Schema.optional(Schema.Boolean)
      })))
    })),
    finishReason: Schema.optional(Schema.String)
  }))),
  promptFeedback: Schema.optional(Schema.Struct({ blockReason: Schema.optional(Schema.String) })),
  usageMetadata: Schema.optional(Schema.Struct({
    promptTokenCount: Schema.optional(Schema.Number),
    candidatesTokenCount: Schema.optional(Schema.Number),
    thoughtsTokenCount: Schema.optional(Schema.Number)
  })),
  modelVersion: Schema.optional(Schema.String)
})
const decodeGenerate = Schema.decodeUnknownEffect(GenerateResponse)

const finishReasons: Record<string, Response.FinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content-filter",
  RECITATION: "content-filter",
  BLOCKLIST: "content-filter",
  PROHIBITED_CONTENT: "content-filter",
  SPII: "content-filter"
}

type Node = { readonly [key: string]: unknown }
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * JSON Schema to Gemini's OpenAPI-3 subset: local `$ref`s inlined (recursion cut off), `null` alternatives
 * turned into `nullable`, `const` into a one-value enum, and keywords Gemini rejects dropped.
 */
export const toGeminiSchema = (schema: Node, root: Node = schema, depth = 0): Node => {
  const ref = schema["$ref"]
  if (typeof ref === "string" && ref.startsWith("#/")) {
    if (depth > 6) return { type: "object" }
    let target: unknown = root
    for (const segment of ref.slice(2).split("/")) target = isNode(target) ? target[segment] : undefined
    return isNode(target) ? toGeminiSchema(target, root, depth + 1) : { type: "object" }
  }
  const out: Record<string, unknown> = {}
  const alternatives = (schema["anyOf"] ?? schema["oneOf"]) as ReadonlyArray<unknown> | undefined
  if (Array.isArray(alternatives)) {
    const nonNull = alternatives.filter((option) => !(isNode(option) && option["type"] === "null"))
    const nullable = nonNull.length < alternatives.length
    if (nonNull.length === 1 && isNode(nonNull[0])) {
      return { ...toGeminiSchema(nonNull[0], root, depth + 1), ...(nullable ? { nullable: true } : {}) }
    }
    out["anyOf"] = nonNull.filter(isNode).map((option) => toGeminiSchema(option, root, depth + 1))
    if (nullable) out["nullable"] = true
  }
  const type = schema["type"]
  if (Array.isArray(type)) {
    const concrete = type.filter((name) => name !== "null")
    if (concrete.length === 1) out["type"] = concrete[0]
    if (concrete.length < type.length) out["nullable"] = true
  } else if (typeof type === "string") out["type"] = type
  else if (isNode(schema["properties"])) out["type"] = "object"
  for (const key of ["description", "minItems", "maxItems", "minimum", "maximum", "nullable"]) {
    if (schema[key] !== undefined) out[key] = schema[key]
  }
  if (Array.isArray(schema["enum"])) out["enum"] = schema["enum"].filter((value) => typeof value === "string")
  if (typeof schema["const"] === "string") out["enum"] = [schema["const"]]
  if (isNode(schema["properties"])) {
    out["properties"] = Object.fromEntries(
      Object.entries(schema["properties"]).map((
        [name, value]
      ) => [name, isNode(value) ? toGeminiSchema(value, root, depth + 1) : {}])
    )
    if (Array.isArray(schema["required"])) out["required"] = schema["required"]
  }
  if (isNode(schema["items"])) out["items"] = toGeminiSchema(schema["items"], root, depth + 1)
  return out
}

export const make = Effect.fnUntraced(function*(settings: ProviderSettings) {
  const client = yield* HttpClient.HttpClient
  const codecTransformer = LanguageModel.defaultCodecTransformer
  const model = settings.model.replace(/^models\//, "")
  const keyHeader: Record<string, string> = Option.match(settings.apiKey, {
    onNone: () => ({}),
    onSome: (key) => ({ "x-goog-api-key": Redacted.value(key) })
  })
  const fail = (reason: AiError.AiErrorReason) => AiError.make({ module: "gemini", method: "generateText", reason })

  const generate = Effect.fnUntraced(function*(options: LanguageModel.ProviderOptions) {
    const generation = yield* GenerationOptions
    const { system, turns } = splitSystem(chatMessages(options.prompt))
    let systemPrompt = system
    const config: Record<string, unknown> = {
      ...(generation.maxOutputTokens === undefined ? {} : { maxOutputTokens: generation.maxOutputTokens }),
      ...(generation.temperature === undefined ? {} : { temperature: generation.temperature })
    }
    if (options.responseFormat.type === "json") {
      const jsonSchema = yield* jsonSchemaOf("gemini", codecTransformer, options.responseFormat)
      if (settings.structuredOutput !== "prompt") config["responseMimeType"] = "application/json"
      if (settings.structuredOutput === "json_schema") config["responseSchema"] = toGeminiSchema(jsonSchema as Node)
      else {
        const instruction = jsonInstruction(options.responseFormat.objectName, jsonSchema)
        systemPrompt = systemPrompt === "" ? instruction : `${systemPrompt}\n\n${instruction}`
      }
    }
    const raw = yield* postJson(client, {
      provider: "gemini",
      url: `${settings.baseUrl}/models/${encodeURIComponent(model)}:generateContent`,
      headers: keyHeader,
      secret: settings.apiKey,
      body: {
        contents: turns.map((turn) => ({
          role: turn.role === "assistant" ? "model" : "user",
          parts: [{ text: turn.content }]
        })),
        ...(systemPrompt === "" ? {} : { systemInstruction: { parts: [{ text: systemPrompt }] } }),
        ...(Object.keys(config).length === 0 ? {} : { generationConfig: config })
      }
    })
    const answer = yield* decodeGenerate(raw).pipe(
      Effect.mapError(() =>
        fail(new AiError.InvalidResponseError({ description: "the answer did not have the expected shape" }))
      )
    )
    const candidate = answer.candidates?.[0]
    if (candidate === undefined) {
      const blocked = answer.promptFeedback?.blockReason
      return yield* fail(
        blocked === undefined
          ? new AiError.InvalidResponseError({ description: "the answer had no candidates" })
          : new AiError.ContentPolicyError({ description: `the prompt was blocked (${blocked})` })
      )
    }
    const parts = candidate.content?.parts ?? []
    const usage = answer.usageMetadata
    const thoughts = usage?.thoughtsTokenCount ?? 0
    return responseParts({
      text: parts.flatMap((part) => part.thought === true || part.text === undefined ? [] : [part.text]).join(""),
      reasoning: parts.flatMap((part) =>
        part.thought === true && part.text !== undefined ? [part.text] : []
      ).join("\n") || undefined,
      finishReason: finishReasons[candidate.finishReason ?? ""] ?? "unknown",
      inputTokens: usage?.promptTokenCount,
      // Thinking tokens are billed as output.
      outputTokens: usage?.candidatesTokenCount === undefined ? undefined : usage.candidatesTokenCount + thoughts,
      reasoningTokens: usage?.thoughtsTokenCount,
      modelId: answer.modelVersion
    })
  })

  const languageModel = yield* LanguageModel.make({
    generateText: generate,
    streamText: (options) => streamOnce(generate(options)),
    codecTransformer
  })
  return { model: languageModel, codecTransformer } satisfies ProviderModel
})
