/**
 * How a command reaches engram: HTTP to a running server, or — with `--embedded` — to the same HTTP app started
 * in this process on an ephemeral loopback port over the data directory. One code path for both, so the embedded
 * CLI behaves exactly as the server does. Every error answer becomes a CliFailure carrying the API's `detail`.
 */
import { Context, Effect, Layer, Logger, Option, Redacted, References } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { CliFailure } from "./CliFailure.ts"
import { ApiKey, apiKeyFrom, DataDir, defaultUrl, Embedded, ServerUrl } from "./GlobalSettings.ts"

export type Query = Record<string, string | number | boolean | ReadonlyArray<string> | undefined>

export interface RequestOptions {
  readonly json?: unknown
  readonly query?: Query
  readonly form?: FormData
  readonly bytes?: { readonly data: Uint8Array; readonly contentType: string }
}

export class EngramClient extends Context.Service<EngramClient, {
  readonly baseUrl: string
  /**
   * A JSON answer (any 2xx); an error answer fails with its `detail`. Typed as `JSON.parse` answers (`any`): each
   * command reads its route's fields, and the CLI tests run every command against the real server.
   */
  // oxlint-disable-next-line typescript/no-explicit-any -- JSON.parse's own type; the commands type what they read
  readonly json: (method: Method, path: string, options?: RequestOptions) => Effect.Effect<any, CliFailure>
  /** A binary answer (e.g. a `.brain` file). */
  readonly bytes: (method: Method, path: string, options?: RequestOptions) => Effect.Effect<Uint8Array, CliFailure>
}>()("engram/cli/EngramClient") {}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** `{bank}` routes, with every path segment encoded. */
export const bankPath = (bankId: string, ...rest: ReadonlyArray<string>) =>
  ["/v1/default/banks", bankId, ...rest].map((part, index) => index === 0 ? part : encodeURIComponent(part)).join("/")

const detailOf = (status: number, text: string): string => {
  try {
    const body = JSON.parse(text) as { detail?: unknown }
    if (typeof body?.detail === "string") return body.detail
    if (body?.detail !== undefined) return JSON.stringify(body.detail)
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim() === "" ? `HTTP ${status}` : text.trim().slice(0, 500)
}

const makeClient = (baseUrl: string, apiKey: Option.Option<Redacted.Redacted<string>>) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const send = (method: Method, path: string, options: RequestOptions = {}) =>
      Effect.gen(function*() {
        let request = HttpClientRequest.make(method)(baseUrl + path)
        for (const [key, value] of Object.entries(options.query ?? {})) {
          if (value === undefined) continue
          request = Array.isArray(value)
            ? HttpClientRequest.appendUrlParams(request, value.map((item) => [key, item] as const))
            : HttpClientRequest.setUrlParam(request, key, String(value))
        }
        if (Option.isSome(apiKey)) request = HttpClientRequest.bearerToken(request, Redacted.value(apiKey.value))
        if (options.json !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, options.json)
        if (options.form !== undefined) request = HttpClientRequest.bodyFormData(request, options.form)
        if (options.bytes !== undefined) {
          request = HttpClientRequest.bodyUint8Array(request, options.bytes.data, options.bytes.contentType)
        }
        const response = yield* http.execute(request).pipe(
          Effect.mapError((error) =>
            CliFailure.failure(
              `cannot reach engram at ${baseUrl}: ${error.message}` +
                " (start it with `engram serve`, pass --url, or use --embedded)"
            )
          )
        )
        if (response.status >= 400) {
          const text = yield* readText(response)
          return yield* CliFailure.fromStatus(response.status, detailOf(response.status, text))
        }
        return response
      })
    const readText = (response: HttpClientResponse.HttpClientResponse) =>
      response.text.pipe(Effect.mapError((error) => CliFailure.failure(`reading the answer failed: ${error.message}`)))
    return EngramClient.of({
      baseUrl,
      json: (method, path, options) =>
        Effect.flatMap(send(method, path, options), (response) =>
          Effect.flatMap(readText(response), (text) =>
            Effect.try({
              try: () => (text === "" ? null : JSON.parse(text)),
              catch: () =>
                CliFailure.failure(`engram answered ${method} ${path} with something that is not JSON`)
            }))),
      bytes: (method, path, options) =>
        Effect.flatMap(send(method, path, options), (response) =>
          response.arrayBuffer.pipe(
            Effect.map((buffer) =>
              new Uint8Array(buffer)
            ),
            Effect.mapError((error) => CliFailure.failure(`reading the answer failed: ${error.message}`))
          ))
    })
  })

/** The engine in this process: the full HTTP app on 127.0.0.1 and a free port, over the given data directory. */
const embeddedUrl = (dataDir: string) =>
  Effect.gen(function*() {
    // Loaded only when asked for: a client command should not pay for loading the engine.
    const [{ AppWith }, { ModelsLive }, { EngramConfig }, { HttpServer }] = yield* Effect.promise(() =>
      Promise.all([
        import("../../layers/AppWith.ts"),
        import("../../layers/Models.ts"),
        import("../config/EngramConfig.ts"),
        import("effect/http")
      ])
    )
    const app = AppWith(EngramConfig.layerWith({ dataDir, host: "127.0.0.1", port: 0 }), ModelsLive)
    const context = yield* Layer.build(app).pipe(
      Effect.mapError((error) => CliFailure.failure(`the embedded engine did not start: ${String(error)}`))
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag === "UnixPathAddress") return yield* CliFailure.failure("the embedded engine has no TCP address")
    return `http://127.0.0.1:${address.port}`
  })

/** The client the global flags ask for. The embedded engine lives as long as the command's scope. */
export const EngramClientLive = Layer.effect(
  EngramClient,
  Effect.gen(function*() {
    const embedded = yield* Embedded
    const env = process.env
    if (embedded) {
      const dataDir = Option.getOrElse(yield* DataDir, () => env["SERVICE_API_DATA_DIR"] ?? "./.engram")
      const url = yield* embeddedUrl(dataDir)
      // With SERVICE_API_TENANT_EXTENSION=api_key the embedded server checks the key like any other.
      return yield* makeClient(url, apiKeyFrom(yield* ApiKey, env))
    }
    const url = Option.getOrElse(yield* ServerUrl, () => defaultUrl(env)).replace(/\/+$/, "")
    return yield* makeClient(url, apiKeyFrom(yield* ApiKey, env))
  })
).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * Runs a command body with a client. Logs go to stderr (stdout is for results, `--json` must stay parseable);
 * the embedded engine logs only warnings and errors.
 */
export const withClient = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const embedded = yield* Embedded
    return yield* body.pipe(
      Effect.provide(EngramClientLive),
      Effect.provideService(Logger.LogToStderr, true),
      embedded ? Effect.provideService(References.MinimumLogLevel, "Warn") : (self) => self
    )
  })
