/**
 * The one HTTP exchange every provider makes: POST a JSON body with the key in a header, read the JSON answer,
 * and turn failures into `AiError` reasons whose retryability follows the status (429, 408/409/425 and 5xx and
 * connection errors are transient; 401/403 and other 4xx are not). Nothing taken from the provider's answer
 * reaches an error message before the key and anything that looks like a key is scrubbed from it.
 */
import { Duration, Effect, Option, Redacted } from "effect"
import { AiError } from "effect/ai"
import type { HttpClient } from "effect/http"
import { HttpClientRequest } from "effect/http"

export interface ProviderRequest {
  /** `openai`, `anthropic` or `gemini`: names the module in errors. */
  readonly provider: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
  /** The key, removed from any text the provider sends back before it is used in a message. */
  readonly secret: Option.Option<Redacted.Redacted<string>>
}

const keyLike = /\b(?:sk|gsk|xai|pk|rk)[-_][\w*-]{4,}|\bAIza[\w-]{10,}|\S*\*{3,}\S*/g
const maxDescription = 300

/** Removes the key (and masked or unmasked key-shaped tokens) and bounds the length. */
export const scrub = (text: string, secret: Option.Option<Redacted.Redacted<string>>): string => {
  let out = text
  if (Option.isSome(secret)) {
    const value = Redacted.value(secret.value)
    if (value.length > 0) out = out.split(value).join("[redacted]")
  }
  out = out.replace(keyLike, "[redacted]").replace(/\s+/g, " ").trim()
  return out.length > maxDescription ? `${out.slice(0, maxDescription)}…` : out
}

/** The human part of a provider's error body (`{error: {message}}`, `{error: "..."}`, `{message}`, `{detail}`). */
const errorText = (body: string): string => {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>
    const error = parsed["error"]
    if (typeof error === "string") return error
    if (
      typeof error === "object" && error !== null && typeof (error as Record<string, unknown>)["message"] === "string"
    ) {
      return (error as Record<string, string>)["message"]!
    }
    for (const key of ["message", "detail"]) if (typeof parsed[key] === "string") return parsed[key] as string
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return body
}

const retryAfterOf = (header: string | undefined): Duration.Duration | undefined => {
  const seconds = header === undefined ? Number.NaN : Number(header)
  return Number.isFinite(seconds) && seconds >= 0 ? Duration.seconds(seconds) : undefined
}

const reasonForStatus = (
  status: number,
  description: string,
  retryAfter: string | undefined
): AiError.AiErrorReason => {
  const detail = description === "" ? `HTTP ${status}` : `HTTP ${status}: ${description}`
  if (status === 401) return new AiError.AuthenticationError({ kind: "InvalidKey", description: detail })
  if (status === 403) return new AiError.AuthenticationError({ kind: "InsufficientPermissions", description: detail })
  if (status === 429) {
    const after = retryAfterOf(retryAfter)
    return new AiError.RateLimitError(after === undefined ? {} : { retryAfter: after })
  }
  if (status === 408 || status === 409 || status === 425 || status >= 500) {
    return new AiError.InternalProviderError({ description: detail })
  }
  if (status >= 400 && status < 500) return new AiError.InvalidRequestError({ description: detail })
  return new AiError.UnknownError({ description: detail })
}

/** POSTs `body` and returns the parsed JSON answer of a 2xx response. */
export const postJson = (
  client: HttpClient.HttpClient,
  request: ProviderRequest
): Effect.Effect<unknown, AiError.AiError> => {
  const fail = (reason: AiError.AiErrorReason) =>
    AiError.make({ module: request.provider, method: "generateText", reason })
  const url = new URL(request.url)
  const where = `${url.origin}${url.pathname}`
  const transport = (description: string) =>
    fail(new AiError.NetworkError({ reason: "TransportError", method: "POST", url: where, description }))
  return Effect.gen(function*() {
    const response = yield* client.execute(
      HttpClientRequest.post(request.url).pipe(
        HttpClientRequest.setHeaders(request.headers),
        HttpClientRequest.bodyJsonUnsafe(request.body)
      )
    ).pipe(
      Effect.mapError((error) => transport(`could not reach ${url.host}: ${scrub(error.message, request.secret)}`))
    )
    const text = yield* response.text.pipe(
      Effect.mapError(() => transport(`${url.host} closed the connection mid-answer`))
    )
    if (response.status < 200 || response.status >= 300) {
      return yield* fail(
        reasonForStatus(response.status, scrub(errorText(text), request.secret), response.headers["retry-after"])
      )
    }
    return yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () =>
        fail(new AiError.InvalidResponseError({ description: `${url.host} answered with something that is not JSON` }))
    })
  })
}
