/**
 * What the providers share between `effect/ai` and their wire formats: the prompt as plain role/content
 * messages, the JSON Schema and prompt instruction for structured output, the per-call generation options, and
 * the response parts (text, reasoning, usage) a `LanguageModel` hook returns. No HTTP here.
 */
import { Context, Effect, Stream } from "effect"
import type { JsonSchema } from "effect"
import type { Response } from "effect/ai"
import { AiError, LanguageModel, type Prompt } from "effect/ai"

/** Per-call settings a provider reads while building its request (the `LanguageModel` API has no slot for them). */
export const GenerationOptions = Context.Reference<{
  readonly maxOutputTokens?: number | undefined
  readonly temperature?: number | undefined
}>("engram/models/llm/GenerationOptions", { defaultValue: () => ({}) })

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/** The prompt's text as role/content messages; files, tool calls and reasoning parts are not sent. */
export const chatMessages = (prompt: Prompt.Prompt): Array<ChatMessage> =>
  prompt.content.flatMap((message): Array<ChatMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
      case "assistant": {
        const text = message.content.flatMap((part) => part.type === "text" ? [part.text] : []).join("\n")
        return [{ role: message.role, content: text }]
      }
      default:
        return []
    }
  })

/** Splits off the system messages (providers that take the system prompt as a separate field). */
export const splitSystem = (messages: ReadonlyArray<ChatMessage>) => ({
  system: messages.filter((message) => message.role === "system").map((message) => message.content).join("\n\n"),
  turns: messages.filter((message) => message.role !== "system") as Array<ChatMessage & { role: "user" | "assistant" }>
})

export type ResponseFormat = LanguageModel.ProviderOptions["responseFormat"]

/**
 * A provider's `LanguageModel` with the codec transformer it was made with: the JSON Schema it sends for
 * structured output and the codec that decodes what comes back (the caller's repair path must decode with the
 * same codec, since a provider may encode optional fields as required nullable ones).
 */
export interface ProviderModel {
  readonly model: LanguageModel.LanguageModel
  readonly codecTransformer: LanguageModel.CodecTransformer
}

/** The JSON Schema a structured-output request is sent with, through the provider's codec transformer. */
export const jsonSchemaOf = (
  provider: string,
  codecTransformer: LanguageModel.CodecTransformer,
  format: ResponseFormat & { readonly type: "json" }
) =>
  Effect.try({
    try: () => codecTransformer(format.schema as never).jsonSchema,
    catch: (error) =>
      AiError.make({
        module: provider,
        method: "generateObject",
        reason: new AiError.UnsupportedSchemaError({
          description: error instanceof Error ? error.message : String(error)
        })
      })
  })

/** The instruction added when the provider does not enforce the schema itself. */
export const jsonInstruction = (objectName: string, jsonSchema: JsonSchema.JsonSchema) =>
  `Answer with only the JSON value for "${objectName}": no prose, no code fences, no comments. ` +
  `It must match this JSON Schema:\n${JSON.stringify(jsonSchema)}`

export interface GeneratedAnswer {
  readonly text: string
  readonly reasoning?: string | undefined
  readonly finishReason: Response.FinishReason
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly modelId?: string | undefined
}

export const responseParts = (answer: GeneratedAnswer): Array<Response.PartEncoded> => [
  { type: "response-metadata", ...(answer.modelId === undefined ? {} : { modelId: answer.modelId }) },
  ...(answer.reasoning ? [{ type: "reasoning" as const, text: answer.reasoning }] : []),
  { type: "text", text: answer.text },
  {
    type: "finish",
    reason: answer.finishReason,
    usage: {
      inputTokens: { total: answer.inputTokens },
      outputTokens: { total: answer.outputTokens, reasoning: answer.reasoningTokens }
    }
  }
]

/** Streaming without server-sent events: the whole answer, emitted as one delta once it has arrived. */
export const streamOnce = (
  generate: Effect.Effect<Array<Response.PartEncoded>, AiError.AiError>
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.fromIterableEffect(Effect.map(generate, (parts) =>
    parts.flatMap((part): Array<Response.StreamPartEncoded> => {
      if (part.type === "text") {
        return [
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: part.text },
          { type: "text-end", id: "0" }
        ]
      }
      return part.type === "finish" || part.type === "response-metadata" ? [part] : []
    })))
