/**
 * How provider failures become `LlmError`s: the contract's reasons, retryability, and messages that name the
 * provider and model but never the key (scrubbed once more here as a last line of defence).
 */
import { Duration } from "effect"
import type { AiError } from "effect/ai"
import type { LlmPurpose } from "../../../src/models/Llm.ts"
import { LlmError } from "../../../src/models/Llm.ts"
import type { ProviderSettings } from "./LlmConfig.ts"
import { scrub } from "./ProviderHttp.ts"

/** `provider/model`, as `Llm.describe` reports it and messages name it. */
export const labelOf = (settings: ProviderSettings) =>
  settings.provider === "none" ? "none" : `${settings.provider}/${settings.model}`

/** Worth another request after a backoff: rate limits, 5xx, timeouts and connection errors. */
export const isTransient = (error: LlmError) =>
  error.retryable && (error.reason === "timeout" || error.reason === "rate_limited" || error.reason === "provider")

export const unavailable = (purpose: LlmPurpose) =>
  new LlmError({
    reason: "unavailable",
    message: `no language model is configured for ${purpose} (set SERVICE_API_LLM_PROVIDER)`,
    retryable: false
  })

export const timedOut = (settings: ProviderSettings, timeout: Duration.Duration) =>
  new LlmError({
    reason: "timeout",
    message: `${labelOf(settings)} did not answer within ${Duration.format(timeout)}`,
    retryable: true
  })

export const toLlmError = (settings: ProviderSettings, error: AiError.AiError): LlmError => {
  const label = labelOf(settings)
  const reason = error.reason
  const make = (kind: LlmError["reason"], message: string, retryable: boolean) =>
    new LlmError({ reason: kind, message: scrub(message, settings.apiKey), retryable })
  switch (reason._tag) {
    case "RateLimitError":
      return make("rate_limited", `${label} is rate limiting requests (HTTP 429)`, true)
    case "AuthenticationError":
      return make(
        "provider",
        `${label} rejected the credentials (${reason.description ?? reason.kind}); check the API key`,
        false
      )
    case "InternalProviderError":
      return make("provider", `${label} failed (${reason.description})`, true)
    case "NetworkError":
      return make("provider", `${label}: ${reason.description ?? "network error"}`, reason.isRetryable)
    case "InvalidRequestError":
      return make("provider", `${label} refused the request (${reason.description ?? "HTTP 400"})`, false)
    default:
      return make("provider", `${label}: ${reason.message}`, reason.isRetryable)
  }
}
