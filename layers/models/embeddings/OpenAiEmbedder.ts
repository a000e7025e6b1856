/**
 * Embeddings from any OpenAI-compatible `POST <base>/embeddings` endpoint (OpenAI, Ollama, vLLM, LM Studio,
 * llama.cpp server, Together, ...): inputs in batches, each attempt under a timeout, transient failures (network,
 * timeout, 408/429/5xx, honouring Retry-After) retried with jittered exponential backoff, any other 4xx failed at
 * once. The key travels only in the Authorization header and is scrubbed from anything the provider sends back
 * before it reaches an error message.
 *
 * The dimension is the configured one (then sent as `dimensions`, for models that can shorten their vectors);
 * without it, one probe request at layer start discovers it, so a misconfigured endpoint fails the start-up.
 */
import { Cause, Duration, Effect, Redacted, Schedule, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { EmbeddingError, Embeddings } from "../../../src/models/Embeddings.ts"

export interface OpenAiOptions {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  readonly baseUrl: string
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly model: string
  /** Requested and expected vector size; discovered by a probe at start when omitted. */
  readonly dimensions?: number | undefined
  /** Inputs per request. Default 64. */
  readonly batchSize?: number | undefined
  /** Per attempt. Default 30 seconds. */
  readonly timeout?: Duration.Input | undefined
  /** Retries after the first attempt for transient failures. Default 4. */
  readonly maxRetries?: number | undefined
  /** First backoff delay, doubled each retry. Default 500 ms. */
  readonly retryBase?: Duration.Input | undefined
}

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({
    index: Schema.optional(Schema.Int),
    embedding: Schema.Array(Schema.Finite)
  }))
})

const decodeResponse = Schema.decodeUnknownEffect(Schema.fromJsonString(EmbeddingsResponse))

const PROBE_TEXT = "dimension probe"

/** Statuses worth another attempt later; the same set the client retries. */
const isTransientStatus = (status: number) => status === 408 || status === 429 || status >= 500

/** The URL without credentials, for messages. */
const displayUrl = (url: string) => {
  const parsed = URL.parse(url)
  if (parsed === null) return "the configured embeddings URL"
  parsed.username = ""
  parsed.password = ""
  return parsed.toString()
}

/** The provider's own words (`{error: {message}}`, `{error}`, `{message}`, `{detail}`) or the raw body. */
const ProviderErrorBody = Schema.fromJsonString(Schema.Struct({
  error: Schema.optional(Schema.Union([Schema.String, Schema.Struct({ message: Schema.optional(Schema.String) })])),
  message: Schema.optional(Schema.String),
  detail: Schema.optional(Schema.String)
}))

const providerMessage = (body: string): string => {
  const decoded = Schema.decodeUnknownOption(ProviderErrorBody)(body)
  if (decoded._tag === "None") return body
  const { detail, error, message } = decoded.value
  return (typeof error === "string" ? error : error?.message) ?? message ?? detail ?? body
}

export const make = Effect.fnUntraced(function*(options: OpenAiOptions) {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`
  const shownUrl = displayUrl(url)
  const batchSize = Math.max(1, options.batchSize ?? 64)
  const secret = options.apiKey === undefined ? "" : Redacted.value(options.apiKey)
  const scrub = (text: string) => {
    const clean = secret === "" ? text : text.split(secret).join("[redacted]")
    const flat = clean.replace(/\s+/g, " ").trim()
    return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat
  }

  const timeout = options.timeout ?? Duration.seconds(30)
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.transformResponse(Effect.timeout(timeout)),
    HttpClient.retryTransient({
      schedule: Schedule.exponential(options.retryBase ?? Duration.millis(500)).pipe(Schedule.jittered),
      times: options.maxRetries ?? 4
    })
  )

  const request = Effect.fnUntraced(function*(inputs: ReadonlyArray<string>, dimensions: number | undefined) {
    const response = yield* HttpClientRequest.post(url).pipe(
      HttpClientRequest.acceptJson,
      secret === "" ? (self) => self : HttpClientRequest.bearerToken(options.apiKey!),
      HttpClientRequest.bodyJsonUnsafe({
        model: options.model,
        // OpenAI rejects an empty string; a space embeds as "no content".
        input: inputs.map((input) => (input === "" ? " " : input)),
        ...(dimensions === undefined ? {} : { dimensions })
      }),
      client.execute,
      Effect.mapError((error) =>
        new EmbeddingError({
          message: Cause.isTimeoutError(error)
            ? `embeddings request to ${shownUrl} timed out`
            : `cannot reach ${shownUrl}: ${scrub(error.message)}`,
          retryable: true
        })
      )
    )
    // The client's timeout covers the wait for the headers; a body that never finishes is bounded here.
    const body = yield* response.text.pipe(
      Effect.timeout(timeout),
      Effect.mapError(() => new EmbeddingError({ message: `${shownUrl} sent an unreadable body`, retryable: true }))
    )
    if (response.status < 200 || response.status >= 300) {
      const hint = response.status === 401 || response.status === 403
        ? " (check SERVICE_API_EMBEDDINGS_API_KEY)"
        : ""
      return yield* new EmbeddingError({
        message: `embeddings endpoint ${shownUrl} answered ${response.status}${hint}: ${scrub(providerMessage(body))}`,
        retryable: isTransientStatus(response.status)
      })
    }
    const decoded = yield* decodeResponse(body).pipe(
      Effect.mapError((error) =>
        new EmbeddingError({
          message: `${shownUrl} answered with an unexpected body: ${scrub(error.message)}`,
          retryable: false
        })
      )
    )
    if (decoded.data.length !== inputs.length) {
      return yield* new EmbeddingError({
        message: `${shownUrl} returned ${decoded.data.length} embeddings for ${inputs.length} inputs`,
        retryable: false
      })
    }
    // Providers may answer out of order; `index` says which input each vector belongs to.
    const ordered = decoded.data.every((item) => item.index !== undefined)
      ? [...decoded.data].sort((a, b) => a.index! - b.index!)
      : decoded.data
    return ordered.map((item) => unit(item.embedding))
  })

  const dimensions = options.dimensions ??
    (yield* request([PROBE_TEXT], undefined).pipe(
      Effect.map(([vector]) => vector!.length),
      Effect.mapError((error) =>
        new EmbeddingError({
          message: `discovering the embedding dimension: ${error.message}`,
          retryable: error.retryable
        })
      )
    ))

  const embed = Effect.fnUntraced(function*(texts: ReadonlyArray<string>) {
    const vectors: Array<Float32Array> = []
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = yield* request(texts.slice(start, start + batchSize), options.dimensions)
      for (const vector of batch) {
        if (vector.length !== dimensions) {
          return yield* new EmbeddingError({
            message: `${options.model} returned ${vector.length}-dimensional vectors, expected ${dimensions}`,
            retryable: false
          })
        }
        vectors.push(vector)
      }
    }
    return vectors
  })

  return Embeddings.of({
    identity: { provider: "openai", model: options.model, dimensions },
    embedDocuments: Effect.fn("OpenAiEmbedder.embedDocuments")(function*(texts: ReadonlyArray<string>) {
      return yield* embed(texts)
    }),
    embedQuery: Effect.fn("OpenAiEmbedder.embedQuery")(function*(text: string) {
      const [vector] = yield* embed([text])
      return vector!
    })
  })
})

/** Not every compatible server normalises (Ollama, llama.cpp); the contract promises unit vectors. */
const unit = (values: ReadonlyArray<number>): Float32Array => {
  let norm = 0
  for (const value of values) norm += value * value
  norm = Math.sqrt(norm) || 1
  return Float32Array.from(values, (value) => value / norm)
}
