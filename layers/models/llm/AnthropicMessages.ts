/**
 * A `LanguageModel` over Anthropic's Messages API. Structured output goes in the system prompt by default; the
 * `json_schema` mode sends Anthropic's `output_format` (structured-outputs beta, supported by recent models
 * only). It makes exactly one request per call: timeouts, retries and repair belong to the caller.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { AiError, AnthropicStructuredOutput, LanguageModel, type Response } from "effect/ai"
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
  splitSystem,
  streamOnce
} from "./ProviderParts.ts"

const MessagesResponse = Schema.Struct({
  model: Schema.optional(Schema.String),
  content: Schema.Array(Schema.Struct({
    type: Schema.String,
    text: Schema.optional(Schema.String),
    thinking: Schema.optional(Schema.String)
  })),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(Schema.Struct({
    input_tokens: Schema.optional(Schema.Number),
    output_tokens: Schema.optional(Schema.Number),
    cache_creation_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
    cache_read_input_tokens: Schema.optional(Schema.NullOr(Schema.Number))
  }))
})
const decodeMessages = Schema.decodeUnknownEffect(MessagesResponse)

const stopReasons: Record<string, Response.FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool-calls",
  pause_turn: "pause",
  refusal: "content-filter"
}

/** The Messages API needs `max_tokens`; this serves calls that do not set one. */
const defaultMaxTokens = 8192
const apiVersion = "2023-06-01"
const structuredOutputsBeta = "structured-outputs-2025-11-13"

/** Turns must alternate and start with the user: merge neighbours with the same role, open with a user turn. */
const alternating = (turns: ReadonlyArray<ChatMessage>) => {
  const merged: Array<{ role: "user" | "assistant"; content: string }> = []
  for (const turn of turns) {
    if (turn.role === "system") continue
    const last = merged[merged.length - 1]
    if (last?.role === turn.role) last.content = `${last.content}\n\n${turn.content}`
    else merged.push({ role: turn.role, content: turn.content })
  }
  if (merged[0]?.role !== "user") merged.unshift({ role: "user", content: "Continue." })
  return merged
}

export const make = Effect.fnUntraced(function*(settings: ProviderSettings) {
  const client = yield* HttpClient.HttpClient
  const native = settings.structuredOutput === "json_schema"
  const codecTransformer = native ? AnthropicStructuredOutput.toCodecAnthropic : LanguageModel.defaultCodecTransformer
  const keyHeader: Record<string, string> = Option.match(settings.apiKey, {
    onNone: () => ({}),
    onSome: (key) => ({ "x-api-key": Redacted.value(key) })
  })
  const invalid = (description: string) =>
    AiError.make({
      module: "anthropic",
      method: "generateText",
      reason: new AiError.InvalidResponseError({ description })
    })

  const generate = Effect.fnUntraced(function*(options: LanguageModel.ProviderOptions) {
    const generation = yield* GenerationOptions
    const { system, turns } = splitSystem(chatMessages(options.prompt))
    let systemPrompt = system
    let outputFormat: unknown = undefined
    if (options.responseFormat.type === "json") {
      const jsonSchema = yield* jsonSchemaOf("anthropic", codecTransformer, options.responseFormat)
      if (native) outputFormat = { type: "json_schema", schema: jsonSchema }
      else {
        const instruction = jsonInstruction(options.responseFormat.objectName, jsonSchema)
        systemPrompt = systemPrompt === "" ? instruction : `${systemPrompt}\n\n${instruction}`
      }
    }
    const raw = yield* postJson(client, {
      provider: "anthropic",
      url: `${settings.baseUrl}/messages`,
      headers: {
        ...keyHeader,
        "anthropic-version": apiVersion,
        ...(outputFormat === undefined ? {} : { "anthropic-beta": structuredOutputsBeta })
      },
      secret: settings.apiKey,
      body: {
        model: settings.model,
        max_tokens: generation.maxOutputTokens ?? defaultMaxTokens,
        messages: alternating(turns),
        ...(systemPrompt === "" ? {} : { system: systemPrompt }),
        ...(generation.temperature === undefined ? {} : { temperature: generation.temperature }),
        ...(outputFormat === undefined ? {} : { output_format: outputFormat })
      }
    })
    const message = yield* decodeMessages(raw).pipe(
      Effect.mapError(() => invalid("the message did not have the expected shape"))
    )
    const usage = message.usage
    const cached = (usage?.cache_creation_input_tokens ?? 0) + (usage?.cache_read_input_tokens ?? 0)
    return responseParts({
      text: message.content.flatMap((block) => block.type === "text" && block.text !== undefined ? [block.text] : [])
        .join(""),
      reasoning: message.content.flatMap((block) => block.thinking === undefined ? [] : [block.thinking]).join("\n") ||
        undefined,
      finishReason: stopReasons[message.stop_reason ?? ""] ?? "unknown",
      inputTokens: usage?.input_tokens === undefined ? undefined : usage.input_tokens + cached,
      outputTokens: usage?.output_tokens,
      modelId: message.model
    })
  })

  const model = yield* LanguageModel.make({
    generateText: generate,
    streamText: (options) => streamOnce(generate(options)),
    codecTransformer
  })
  return { model, codecTransformer } satisfies ProviderModel
})
