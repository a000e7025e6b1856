/**
 * The client brain learning reads another engram instance with: its `/version`, its `.brain` export, and over REST
 * its memories, mental models and entities. Remote addresses pass the same private-network guard as webhooks and
 * research (checked on the name first, then on the address each connection really uses, so DNS rebinding is
 * refused too) unless private networks are allowed, and a public remote only over https. Every answer is read
 * within a byte cap (an endless body fails at the cap instead of filling memory). The remote key is sent as a bearer
 * token and nowhere else: errors name the status and the path, never the key.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Redacted } from "effect"
import { type HttpClient, HttpClientRequest } from "effect/http"
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import { BodyTooLarge, cappedBytes } from "../net/CappedBody.ts"
import { destinationDenied, guardedLookup, isPrivateAddress } from "../net/GuardedLookup.ts"
import { refusal } from "../research/NetworkGuard.ts"

/** A read of the remote that failed; `retryable` is false when trying again cannot help (an answer over its cap). */
export class RemoteError extends Error {
  readonly retryable: boolean
  constructor(message: string, retryable = true) {
    super(message)
    this.retryable = retryable
  }
}

/** Bytes one JSON answer of the remote (a page of 100 memories, the mental models, ...) may take at most. */
export const maxJsonAnswerBytes = 16 * 1024 * 1024

/**
 * Why the remote may not be reached, or undefined when it may. The remote key and the remote's memories cross the
 * network, so a public remote is reached over https only; plain http is for private or loopback remotes, and only
 * where private networks are allowed (a name whose every address is private, or a private address).
 */
export const remoteRefusal = (endpoint: string, allowPrivateNetworks: boolean): Effect.Effect<string | undefined> => {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    return Effect.succeed("is not an absolute URL")
  }
  const plainHttp = url.protocol === "http:"
  return Effect.gen(function*() {
    const reason = yield* refusal(url, allowPrivateNetworks)
    if (reason !== undefined) {
      return allowPrivateNetworks
        ? reason
        : `${reason}; set SERVICE_API_BRAIN_LEARN_ALLOW_PRIVATE_NETWORKS=true to learn from private or loopback addresses`
    }
    if (!plainHttp) return undefined
    const httpsOnly = "must use https: the remote key and memories would cross the network unencrypted"
    if (!allowPrivateNetworks) {
      return `${httpsOnly} (plain http is accepted only for private or loopback remotes, with ` +
        "SERVICE_API_BRAIN_LEARN_ALLOW_PRIVATE_NETWORKS=true)"
    }
    // Private networks allowed: plain http still only to a remote whose every address is private.
    const publicAt = yield* publicAddressOf(url)
    return publicAt === undefined ? undefined : `${httpsOnly} (${url.hostname} is public: ${publicAt})`
  })
}

/** A public address the URL's host is or resolves to; undefined when all of them are private. */
const publicAddressOf = (url: URL): Effect.Effect<string | undefined> => {
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (isIP(host) !== 0) return Effect.succeed(isPrivateAddress(host) ? undefined : host)
  return Effect.tryPromise(() => lookup(host, { all: true, verbatim: true })).pipe(
    Effect.map((addresses) => addresses.find((entry) => !isPrivateAddress(entry.address))?.address),
    // A name that does not resolve is refused by the connection itself.
    Effect.orElseSucceed(() => undefined)
  )
}

const learnLookup = guardedLookup((host, address) => `${host} resolves to ${address}, not a public address`)
/** Plain http with private networks allowed: the connection too must go to a private address (no rebinding out). */
const plainHttpLookup = guardedLookup(
  (host, address) => `${host} resolves to ${address}, a public address, which is learned from over https only`,
  (address) => !isPrivateAddress(address)
)

const requestTimeout = Duration.seconds(30)

export interface RemoteEngram {
  readonly getJson: (path: string) => Effect.Effect<{ readonly status: number; readonly body: unknown }, RemoteError>
  readonly getBytes: (
    path: string,
    maxBytes: number
  ) => Effect.Effect<{ readonly status: number; readonly bytes: Uint8Array | null }, RemoteError>
}

/** A client bound to one remote base URL and (optionally) its key; built per learn, scoped to it. */
export const remoteEngram = (options: {
  readonly endpoint: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly allowPrivateNetworks: boolean
}) =>
  Effect.gen(function*() {
    const plainHttp = URL.parse(options.endpoint)?.protocol === "http:"
    const lookup = !options.allowPrivateNetworks ? learnLookup : plainHttp ? plainHttpLookup : undefined
    const agent = yield* NodeHttpClient.makeAgent(lookup === undefined ? {} : { lookup })
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
      if (error instanceof RemoteError) return error
      if (error instanceof BodyTooLarge) {
        return new RemoteError(
          `GET ${path}: the remote's answer is larger than ${error.maxBytes} bytes; reading stopped there`,
          false
        )
      }
      const cause = (error as { reason?: { _tag?: string; cause?: unknown } }).reason?.cause
      const denied = cause instanceof Error && (cause as NodeJS.ErrnoException).code === destinationDenied
      return new RemoteError(denied ? cause.message : `GET ${path} failed: could not reach the remote`)
    }
    const timedOut = (path: string) => () => Effect.fail(new RemoteError(`GET ${path} timed out after 30 s`))

    const getJson = (path: string) =>
      client.execute(request(path, "application/json")).pipe(
        Effect.flatMap((response) =>
          response.status === 200
            ? Effect.flatMap(cappedBytes(response.stream, maxJsonAnswerBytes), (bytes) =>
              Effect.try({
                try: () => ({ status: 200, body: JSON.parse(new TextDecoder().decode(bytes)) as unknown }),
                catch: () => new RemoteError(`GET ${path}: the remote's answer is not JSON`, false)
              }))
            : Effect.succeed({ status: response.status, body: null as unknown })
        ),
        Effect.mapError(failure(path)),
        Effect.timeoutOrElse({ duration: requestTimeout, orElse: timedOut(path) })
      )

    const getBytes = (path: string, maxBytes: number) =>
      client.execute(request(path, "application/octet-stream")).pipe(
        Effect.flatMap(
          (response): Effect.Effect<{ readonly status: number; readonly bytes: Uint8Array | null }, unknown> => {
            if (response.status !== 200) return Effect.succeed({ status: response.status, bytes: null })
            const length = Number(response.headers["content-length"] ?? "0")
            const tooLarge =
              `GET ${path}: the remote file is larger than SERVICE_API_BRAIN_MAX_FILE_BYTES (${maxBytes} bytes)`
            if (length > maxBytes) return Effect.fail(new RemoteError(tooLarge, false))
            // A missing or false length is no promise: the download itself stops at the cap.
            return cappedBytes(response.stream, maxBytes).pipe(
              Effect.map((bytes) => ({ status: 200, bytes })),
              Effect.mapError((error) =>
                error instanceof BodyTooLarge ? new RemoteError(`${tooLarge}; reading stopped there`, false) : error
              )
            )
          }
        ),
        Effect.mapError(failure(path)),
        Effect.timeoutOrElse({ duration: requestTimeout, orElse: timedOut(path) })
      )

    return { getJson, getBytes } satisfies RemoteEngram
  })
