/**
 * The language-model contract engram's features use (retain extraction, reflect, consolidation). Providers
 * implement `effect/ai`'s `LanguageModel`; this service adds what every call here needs on top: the purpose
 * (which may use its own provider), structured output with repair for small local models, timeouts, retries,
 * token usage and a trace row per call. With no provider configured `available` is false and calls fail with
 * `LlmError` reason `unavailable`, so features fall back to their offline paths.
 */
import { Context, type Duration, Effect, Layer, Schema } from "effect"

export const LlmPurpose = Schema.Literals(["retain", "reflect", "consolidation"])
export type LlmPurpose = typeof LlmPurpose.Type

export interface LlmMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface LlmRequest {
  readonly purpose: LlmPurpose
  /** What the call is for, recorded in the trace (e.g. `retain.extract_facts`, `reflect.answer`). */
  readonly scope: string
  readonly bankId: string
  readonly operationId?: string | undefined
  readonly messages: ReadonlyArray<LlmMessage>
  readonly maxOutputTokens?: number | undefined
  readonly temperature?: number | undefined
}

export interface LlmUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/** No tokens spent: an offline path's usage, and where a sum over several calls starts. */
export const zeroUsage: LlmUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

export const addUsage = (left: LlmUsage, right: LlmUsage): LlmUsage => ({
  inputTokens: left.inputTokens + right.inputTokens,
  outputTokens: left.outputTokens + right.outputTokens,
  totalTokens: left.totalTokens + right.totalTokens
})

/** The usage as every response and operation result reports it (`usage` in the API): one mapping for all. */
export const usageJson = (usage: LlmUsage) => ({
  input_tokens: usage.inputTokens,
  output_tokens: usage.outputTokens,
  total_tokens: usage.totalTokens
})

export class LlmError extends Schema.TaggedError<LlmError>()("LlmError", {
  reason: Schema.Literals(["unavailable", "timeout", "provider", "invalid_output", "rate_limited"]),
  /** Safe to show to clients and store in `error_message`: never contains a key or a full prompt. */
  message: Schema.String,
  retryable: Schema.Boolean
}) {}

/**
 * What a connectivity probe found for one purpose. Status only: never the provider, model, endpoint, key or the
 * provider's error text (which may echo any of them).
 */
export interface LlmProbe {
  readonly status: "connected" | "not_configured" | "auth_failed" | "unreachable" | "timeout"
  /** Round trip of the probe request; null when none was sent. */
  readonly latencyMs: number | null
}

const unavailable = new LlmError({
  reason: "unavailable",
  message: "no language model is configured (SERVICE_API_LLM_PROVIDER=none)",
  retryable: false
})

export class Llm extends Context.Service<Llm, {
  /** False when no provider is configured for the purpose (offline mode). */
  readonly available: (purpose: LlmPurpose) => boolean
  /** `provider/model` serving the purpose, or `none`. */
  readonly describe: (purpose: LlmPurpose) => string
  readonly generateText: (
    request: LlmRequest
  ) => Effect.Effect<{ readonly text: string; readonly usage: LlmUsage }, LlmError>
  /**
   * Asks for JSON matching `schema` (JSON Schema response format where the provider supports it), extracts and
   * repairs the JSON from whatever the model answered (prose around it, code fences, thinking blocks, a list
   * where an object was asked for), validates it, and asks once more with the validation error when it is
   * still invalid.
   */
  readonly generateObject: <S extends Schema.Top>(
    request: LlmRequest & { readonly schema: S; readonly objectName: string }
  ) => Effect.Effect<{ readonly value: S["Type"]; readonly usage: LlmUsage }, LlmError, S["DecodingServices"]>
  /**
   * Sends one minimal request to each distinct model serving the purposes (a model shared by several purposes is
   * asked once), without retries and bounded by `timeout`, so a user can tell "not configured", "key refused" and
   * "unreachable" apart instead of waiting on a stalled operation. Never fails.
   */
  readonly probe: (timeout: Duration.Input) => Effect.Effect<Readonly<Record<LlmPurpose, LlmProbe>>>
}>()("engram/models/Llm") {
  /** No language model at all: every feature takes its offline path. */
  static readonly layerNone = Layer.succeed(Llm)(Llm.of({
    available: () => false,
    describe: () => "none",
    generateText: () => Effect.fail(unavailable),
    generateObject: () => Effect.fail(unavailable),
    probe: () => {
      const none: LlmProbe = { status: "not_configured", latencyMs: null }
      return Effect.succeed({ retain: none, reflect: none, consolidation: none })
    }
  }))
}
