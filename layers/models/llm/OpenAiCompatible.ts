/**
 * A `LanguageModel` over any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, LM Studio,
 * llama.cpp server, Groq, OpenRouter, Together). Structured output is sent as a strict `json_schema` response
 * format, as `json_object` plus the schema in the prompt, or in the prompt only, as configured. It makes exactly
 * one request per call: timeouts, retries and repair belong to the caller.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { AiError, LanguageModel, OpenAiStructuredOutput, type Response } from "effect/ai"
import { HttpClient } from "effect/http"
import type { ProviderSettings } from "./LlmConfig.ts"
import { postJson } from "./ProviderHttp.ts"
import type { ChatMessage, ProviderModel } from "./ProviderParts.ts"
import {
  chatMessages,
  GenerationOptions,
  jsonInstruction,
  jsonSchemaOf,
  responseParts,
  streamOnce
} from "./ProviderParts.ts"

const ChatCompletion = Schema.Struct({
  model: Schema.optional(Schema.String),
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      content: Schema.optional(Schema.NullOr(Schema.String)),
      refusal: Schema.optional(Schema.NullOr(Schema.String)),
      // DeepSeek and vLLM call it `reasoning_content`, Ollama and OpenRouter `reasoning`.
      reasoning_content: Schema.optional(Schema.NullOr(Schema.String)),
      reasoning: Schema.optional(Schema.NullOr(Schema.String))
    }),
    finish_reason: Schema.optional(Schema.NullOr(Schema.String))
  })),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt_tokens: Schema.optional(Schema.Number),
    completion_tokens: Schema.optional(Schema.Number),
    completion_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({
      reasoning_tokens: Schema.optional(Schema.NullOr(Schema.Number))
    })))
  })))
})
const decodeCompletion = Schema.decodeUnknownEffect(ChatCompletion)

const finishReasons: Record<string, Response.FinishReason> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  tool_calls: "tool-calls",
  function_call: "tool-calls"
}

/** OpenAI response-format names allow letters, digits, `_` and `-`, up to 64 characters. */
const formatName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "response"

/** Adds to the first system message rather than adding a second one: many local chat templates allow only one. */
const withInstruction = (messages: Array<ChatMessage>, instruction: string): Array<ChatMessage> =>
  messages[0]?.role === "system"
    ? [{ role: "system", content: `${messages[0].content}\n\n${instruction}` }, ...messages.slice(1)]
    : [{ role: "system", content: instruction }, ...messages]

export const make = Effect.fnUntraced(function*(settings: ProviderSettings) {
  const client = yield* HttpClient.HttpClient
  const codecTransformer = settings.structuredOutput === "json_schema"
    ? OpenAiStructuredOutput.toCodecOpenAI
    : LanguageModel.defaultCodecTransformer
  // OpenAI's own API has replaced `max_tokens` by `max_completion_tokens`; compatible servers know the former.
  const maxTokensField = new URL(settings.baseUrl).host === "api.openai.com" ? "max_completion_tokens" : "max_tokens"
  const headers: Record<string, string> = Option.match(settings.apiKey, {
    onNone: () => ({}),
    onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
  })
  const invalid = (description: string) =>
    AiError.make({
      module: "openai",
      method: "generateText",
      reason: new AiError.InvalidResponseError({ description })
    })

  const generate = Effect.fnUntraced(function*(options: LanguageModel.ProviderOptions) {
    const generation = yield* GenerationOptions
    let messages = chatMessages(options.prompt)
    let responseFormat: unknown = undefined
    if (options.responseFormat.type === "json") {
      const jsonSchema = yield* jsonSchemaOf("openai", codecTransformer, options.responseFormat)
      if (settings.structuredOutput === "json_schema") {
        responseFormat = {
          type: "json_schema",
          json_schema: { name: formatName(options.responseFormat.objectName), schema: jsonSchema, strict: true }
        }
      } else {
        messages = withInstruction(messages, jsonInstruction(options.responseFormat.objectName, jsonSchema))
        if (settings.structuredOutput === "json_object") responseFormat = { type: "json_object" }
      }
    }
    const raw = yield* postJson(client, {
      provider: "openai",
      url: `${settings.baseUrl}/chat/completions`,
      headers,
      secret: settings.apiKey,
      body: {
        model: settings.model,
        messages,
        ...(generation.maxOutputTokens === undefined ? {} : { [maxTokensField]: generation.maxOutputTokens }),
        ...(generation.temperature === undefined ? {} : { temperature: generation.temperature }),
        ...(responseFormat === undefined ? {} : { response_format: responseFormat })
      }
    })
    const completion = yield* decodeCompletion(raw).pipe(
      Effect.mapError(() => invalid("the chat completion did not have the expected shape"))
    )
    const choice = completion.choices[0]
    if (choice === undefined) return yield* invalid("the chat completion had no choices")
    const refused = choice.message.refusal !== undefined && choice.message.refusal !== null
    return responseParts({
      text: choice.message.content ?? "",
      reasoning: choice.message.reasoning_content ?? choice.message.reasoning ?? undefined,
      finishReason: refused ? "content-filter" : finishReasons[choice.finish_reason ?? ""] ?? "unknown",
      inputTokens: completion.usage?.prompt_tokens,
      outputTokens: completion.usage?.completion_tokens,
      reasoningTokens: completion.usage?.completion_tokens_details?.reasoning_tokens ?? undefined,
      modelId: completion.model
    })
  })

  const model = yield* LanguageModel.make({
    generateText: generate,
    streamText: (options) => streamOnce(generate(options)),
    codecTransformer
  })
  return { model, codecTransformer } satisfies ProviderModel
})
