/**
 * The client brain learning reads another engram instance with: its `/version`, its `.brain` export, and over REST
 * its memories, mental models and entities. Remote addresses pass the same private-network guard as webhooks and
 * research (checked on the name first, then on the address each connection really uses, so DNS rebinding is
 * refused too) unless private networks are allowed. The remote key is sent as a bearer token and nowhere else:
 * errors name the status and the path, never the key.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Redacted } from "effect"
import { type HttpClient, HttpClientRequest } from "effect/http"
import { destinationDenied, guardedLookup } from "../net/GuardedLookup.ts"
import { refusal } from "../research/NetworkGuard.ts"

export class RemoteError extends Error {}

/** Why the remote may not be reached, or undefined when it may. */
export const remoteRefusal = (endpoint: string, allowPrivateNetworks: boolean): Effect.Effect<string | undefined> => {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    return Effect.succeed("is not an absolute URL")
  }
  return Effect.map(refusal(url, allowPrivateNetworks), (reason) =>
    reason === undefined
      ? undefined
      : allowPrivateNetworks
      ? reason
      : `${reason}; set SERVICE_API_BRAIN_LEARN_ALLOW_PRIVATE_NETWORKS=true to learn from private or loopback addresses`)
}

const learnLookup = guardedLookup((host, address) => `${host} resolves to ${address}, not a public address`)

const requestTimeout = Duration.seconds(30)

export interface RemoteEngram {
  readonly getJson: (path: string) => Effect.Effect<{ readonly status: number; readonly body: unknown }, RemoteError>
  readonly getBytes: (path: string, maxBytes: number) => Effect.Effect<{ readonly status: number; readonly bytes: Uint8Array | null }, RemoteError>
}

/** A client bound to one remote base URL and (optionally) its key; built per learn, scoped to it. */
export const remoteEngram = (options: {
  readonly endpoint: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly allowPrivateNetworks: boolean
}) =>
  Effect.gen(function*() {
    const agent = yield* NodeHttpClient.makeAgent(options.allowPrivateNetworks ? {} : { lookup: learnLookup })
    const client: HttpClient.HttpClient = yield* NodeHttpClient.makeNodeHttp.pipe(
      Effect.provideService(NodeHttpClient.HttpAgent, agent)
    )
    const base = options.endpoint.replace(/\/+$/, "")
    const key = options.apiKey === undefined ? "" : Redacted.value(options.apiKey)
    const request = (path: string, accept: string) =>
      HttpClientRequest.get(`${base}${path}`).pipe(
        HttpClientRequest.setHeaders({
          accept,
          "user-agent": "engram-brain-learn",
          ...(key === "" ? {} : { authorization: `Bearer ${key}` })
        })
      )
    const failure = (path: string) => (error: unknown) => {
      const cause = (error as { reason?: { _tag?: string; cause?: unknown } }).reason?.cause
      const denied = cause instanceof Error && (cause as NodeJS.ErrnoException).code === destinationDenied
      return new RemoteError(denied ? cause.message : `GET ${path} failed: could not reach the remote`)
    }
    const timedOut = (path: string) => () => Effect.fail(new RemoteError(`GET ${path} timed out after 30 s`))

    const getJson = (path: string) =>
      client.execute(request(path, "application/json")).pipe(
        Effect.flatMap((response) =>
          response.status === 200
            ? Effect.map(response.json, (body) => ({ status: 200, body }))
            : Effect.succeed({ status: response.status, body: null as unknown })
        ),
        Effect.mapError(failure(path)),
        Effect.timeoutOrElse({ duration: requestTimeout, orElse: timedOut(path) })
      )

    const getBytes = (path: string, maxBytes: number) =>
      client.execute(request(path, "application/octet-stream")).pipe(
        Effect.flatMap((response): Effect.Effect<{ readonly status: number; readonly bytes: Uint8Array | null }, unknown> => {
          if (response.status !== 200) return Effect.succeed({ status: response.status, bytes: null })
          const length = Number(response.headers["content-length"] ?? "0")
          if (length > maxBytes) {
            return Effect.fail(new RemoteError(`GET ${path}: the remote file (${length} bytes) exceeds SERVICE_API_BRAIN_MAX_FILE_BYTES`))
          }
          return Effect.map(response.arrayBuffer, (buffer) => ({ status: 200, bytes: new Uint8Array(buffer) }))
        }),
        Effect.mapError((error) => error instanceof RemoteError ? error : failure(path)(error)),
        Effect.timeoutOrElse({ duration: requestTimeout, orElse: timedOut(path) })
      )

    return { getJson, getBytes } satisfies RemoteEngram
  })
