/**
 * The delivery worker: one background fiber (scoped to the service) that claims due deliveries from the
 * outbox and sends each on its own fiber, at most `concurrency` at a time, each bounded by its webhook's
 * timeout. Every attempt is recorded; failures are retried with exponential backoff up to a cap and a maximum
 * number of attempts. Producers never wait on it: they only write rows and `wake` it. On a cluster it runs on one
 * runner only (a singleton); producers on other nodes are seen within the shared-database poll interval.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Cause, Clock, Context, Duration, Effect, Layer, Option, Queue, type Scope } from "effect"
import type { HttpClientError } from "effect/http"
import { HttpClientRequest } from "effect/http"
import { ClusterNode } from "../cluster/ClusterNode.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { checkDestination, destinationLookup } from "./DestinationGuard.ts"
import { cappedText } from "../net/CappedBody.ts"
import type { HttpConfig } from "./WebhookSchemas.ts"
import { deliveryHeader, eventHeader, eventIdHeader, sign, signatureHeader } from "./WebhookPayload.ts"
import type { AttemptOutcome, DueDelivery } from "./WebhookStore.ts"
import { WebhookStore } from "./WebhookStore.ts"

/** Sends in flight at once across all webhooks: a dead receiver holds a slot only until its timeout. */
const concurrency = 8
/**
 * On PostgreSQL, even with no wake-up (another process sharing the database queued the row, a clock jump) the
 * outbox is looked at this often: two small queries per interval are all an idle server spends here. Embedded
 * PGlite has no other process, so there an empty outbox is looked at again only when woken (each look cost PGlite
 * file work: 0.4 % of a core on an idle server).
 */
const pollInterval = Duration.seconds(5)
/**
 * The shortest sleep between rounds that claimed less than they could. A row can be due yet not claimable for a
 * moment (another worker holds its lock, or it fell due between the claim and the look): look again soon, never
 * at once, so no state of the outbox can make the worker spin.
 */
const minimumWait = Duration.millis(50)
/** Receivers' answers are kept for inspection, bounded. */
/**
 * A delivery keeps the reply's status and a short excerpt (what a user needs to see why a receiver refused), never the
 * whole body: the replies of an internal service would otherwise be stored and served back. At most this much of a
 * reply is read at all.
 */
const maxStoredBody = 256
const maxReadBytes = 4096

/** The wait before attempt `attempt + 1`: the initial backoff doubled per failure, capped. */
export const backoffSeconds = (config: HttpConfig, failedAttempts: number): number =>
  Math.min(config.retry_backoff_seconds * 2 ** Math.max(0, failedAttempts - 1), config.retry_max_backoff_seconds)

const describeFailure = (error: HttpClientError.HttpClientError | { readonly _tag: "TimeoutError" }): string => {
  if (error._tag === "TimeoutError") return "timed out"
  const reason = error.reason
  if (reason._tag === "TransportError") {
    const cause = reason.cause
    return cause instanceof Error && cause.message !== "" ? cause.message : "the connection failed"
  }
  return reason._tag
}

const targetUrl = (url: string, params: Readonly<Record<string, string>>) => {
  const target = new URL(url)
  for (const [key, value] of Object.entries(params)) target.searchParams.append(key, value)
  return target
}

export class WebhookDelivery extends Context.Service<WebhookDelivery, {
  /** Tells the worker new deliveries may be due (cheap; never waits). */
  readonly wake: Effect.Effect<void>
}>()("engram/webhooks/WebhookDelivery") {
  static readonly layer = Layer.effect(
    WebhookDelivery,
    Effect.gen(function*() {
      const store = yield* WebhookStore
      const config = yield* EngramConfig
      const sharedDatabase = Option.isSome(config.databaseUrl)
      const node = yield* ClusterNode
      // Its own node:http agents: every connection's resolved address is checked at connect time (link-local and
      // metadata addresses always, private ones when denied). Redirects are never followed (they could point anywhere).
      const policy = { denyPrivate: config.webhookDenyPrivate }
      const agent = yield* NodeHttpClient.makeAgent({ lookup: destinationLookup(policy) })
      const client = yield* NodeHttpClient.makeNodeHttp.pipe(Effect.provideService(NodeHttpClient.HttpAgent, agent))
      const wakeups = yield* Queue.sliding<void>(1)
      let inFlight = 0

      const send = (delivery: DueDelivery): Effect.Effect<Omit<AttemptOutcome, "durationMs">> =>
        Effect.gen(function*() {
          const httpConfig = delivery.httpConfig
          const refused = yield* Effect.flip(checkDestination(delivery.url, policy)).pipe(Effect.option)
          if (Option.isSome(refused)) return { statusCode: null, error: refused.value, responseBody: null }
          const headers: Record<string, string> = {
            ...httpConfig.headers,
            "content-type": "application/json",
            "user-agent": "engram-webhooks",
            [eventHeader]: delivery.eventType,
            [eventIdHeader]: delivery.eventId,
            [deliveryHeader]: delivery.id,
            ...(delivery.secret === null ? {} : { [signatureHeader]: sign(delivery.secret, delivery.body) })
          }
          const request = HttpClientRequest.post(targetUrl(delivery.url, httpConfig.params)).pipe(
            HttpClientRequest.setHeaders(headers),
            HttpClientRequest.bodyText(delivery.body, "application/json")
          )
          const exchange = client.execute(request).pipe(
            Effect.flatMap((response) =>
              cappedText(response, maxReadBytes).pipe(
                Effect.orElseSucceed(() => ""),
                Effect.map((text) => ({
                  statusCode: response.status,
                  error: response.status >= 200 && response.status < 300 ? null : `HTTP ${response.status}`,
                  responseBody: text === "" ? null : text.slice(0, maxStoredBody)
                }))
              )
            ),
            Effect.timeoutOrElse({
              duration: Duration.seconds(httpConfig.timeout_seconds),
              orElse: () => Effect.fail({ _tag: "TimeoutError" as const })
            })
          )
          return yield* exchange.pipe(
            Effect.catch((error) =>
              Effect.succeed({ statusCode: null, error: describeFailure(error), responseBody: null })
            )
          )
        })

      const attempt = (delivery: DueDelivery) =>
        Effect.gen(function*() {
          const started = yield* Clock.currentTimeMillis
          const result = yield* send(delivery)
          const outcome = { ...result, durationMs: (yield* Clock.currentTimeMillis) - started }
          const failedAttempts = delivery.attempts + 1
          const next = outcome.error === null
            ? { status: "completed" as const }
            : failedAttempts >= delivery.httpConfig.max_attempts
            ? { status: "failed" as const }
            : { status: "pending" as const, retryAfterSeconds: backoffSeconds(delivery.httpConfig, failedAttempts) }
          yield* store.recordAttempt(delivery, outcome, next)
        }).pipe(
          // Shutdown mid-send: the attempt never finished, so it is not counted and the row goes out again.
          Effect.onInterrupt(() => store.release(delivery.id)),
          Effect.annotateLogs({ webhookId: delivery.webhookId, deliveryId: delivery.id })
        )

      const wake = Effect.sync(() => void Queue.offerUnsafe(wakeups, undefined))

      const tick = (scope: Scope.Scope) =>
        Effect.gen(function*() {
          // Cleared before looking, so a wake-up that arrives while this round looks starts the next one.
          yield* Queue.clear(wakeups)
          const free = concurrency - inFlight
          if (free > 0) {
            const claimed = yield* store.claimDue(free)
            for (const delivery of claimed) {
              inFlight++
              yield* Effect.forkIn(
                attempt(delivery).pipe(Effect.ensuring(Effect.andThen(Effect.sync(() => inFlight--), wake))),
                scope
              )
            }
            // A full batch means more may be due right away.
            if (claimed.length === free) return
          }
          // Sleep until the next delivery falls due, or until woken: by a producer that queued a row, a re-enabled
          // webhook, or a send that finished (which also frees a slot when all were busy). Nothing pending: sleep
          // until woken, looking again only after the safety interval.
          const due = free > 0 ? yield* store.nextDueInMillis : Option.none<number>()
          const wait = Option.match(due, {
            onNone: () => sharedDatabase ? Option.some(pollInterval) : Option.none(),
            onSome: (millis) =>
              Option.some(
                Duration.clamp(Duration.millis(Math.ceil(millis)), { minimum: minimumWait, maximum: pollInterval })
              )
          })
          yield* Option.match(wait, {
            onNone: () => Queue.take(wakeups),
            onSome: (duration) => Queue.take(wakeups).pipe(Effect.timeoutOption(duration))
          })
        })

      // Claims left by a worker that is gone are given back first. Safe because only one worker runs at a time:
      // this process's, or on a cluster the one runner holding the singleton, which starts only once the previous
      // holder has stopped (its sends interrupted and released) or died (its claims are what this gives back).
      const run = Effect.gen(function*() {
        const recovered = yield* store.releaseAllClaims
        if (recovered > 0) {
          yield* Effect.logInfo("webhook deliveries interrupted by a restart go out again", { recovered })
        }
        // Sends live in the worker's scope: when the singleton moves away they are interrupted and released.
        const scope = yield* Effect.scope
        // One failed round (the database restarting, say) must not end delivery for good.
        yield* tick(scope).pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause)
              ? Effect.failCause(cause)
              : Effect.logError("webhook delivery round failed", cause).pipe(
                Effect.andThen(Effect.sleep(Duration.seconds(1)))
              )
          ),
          Effect.forever
        )
      })
      // Not traced: an idle loop would export a trace per look, and a destination URL often carries a
      // credential (a token in its path) that a client span would record.
      yield* node.singleton("webhook-delivery", run.pipe(Effect.withTracerEnabled(false)))
      return WebhookDelivery.of({ wake })
    })
  )
}
