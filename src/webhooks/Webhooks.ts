/**
 * The webhook API shared by REST and in-process callers: register, list, partially update and delete a bank's
 * webhooks and page through their deliveries. Also the layer that wires the outbox, the delivery worker and
 * the event listener that turns bank events into deliveries.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Banks } from "../bank/Banks.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { NotFound, ValidationError } from "../domain/Errors.ts"
import { BankEvents } from "../events/BankEvents.ts"
import { checkDestination } from "./DestinationGuard.ts"
import { WebhookDelivery } from "./WebhookDelivery.ts"
import { eventBody } from "./WebhookPayload.ts"
import type {
  CreateWebhookRequest,
  HttpConfig,
  HttpConfigPatch,
  UpdateWebhookRequest,
  WebhookDelivery as DeliveryView,
  WebhookResponse
} from "./WebhookSchemas.ts"
import { defaultHttpConfig, redacted } from "./WebhookSchemas.ts"
import type { DeliveryRecord, WebhookRecord } from "./WebhookStore.ts"
import { WebhookStore } from "./WebhookStore.ts"

/** Headers the service sets itself; a webhook cannot override them. */
const reservedHeader = /^(content-type|content-length|host|transfer-encoding|connection|x-engram-.*)$/i
/** Header and query parameter values whose names say they are credentials are masked when a webhook is read back. */
const credentialName = /authorization|cookie|token|secret|key|password|signature/i

/**
 * Applies named values (headers or params) onto the current ones: `null` removes a name, the redacted value a
 * read returned keeps the current value (so a client can send back what it read), anything else sets it.
 */
const mergeNamed = (
  current: Readonly<Record<string, string>>,
  patch: Readonly<Record<string, string | null>> | undefined,
  normalize: (name: string) => string
): Record<string, string> => {
  const merged = new Map(Object.entries(current).map(([name, value]) => [normalize(name), [name, value] as const]))
  for (const [name, value] of Object.entries(patch ?? {})) {
    if (value === null) merged.delete(normalize(name))
    else if (value !== redacted) merged.set(normalize(name), [name, value])
  }
  return Object.fromEntries(merged.values())
}

/** The config after applying the given fields onto `current` (the defaults at registration), then validated. */
const resolveHttpConfig = (current: HttpConfig, patch: HttpConfigPatch | undefined) =>
  Effect.gen(function*() {
    const merged: HttpConfig = {
      ...current,
      ...patch,
      // Header names are case-insensitive: `authorization` replaces a stored `Authorization`.
      headers: mergeNamed(current.headers, patch?.headers, (name) => name.toLowerCase()),
      params: mergeNamed(current.params, patch?.params, (name) => name)
    }
    const reserved = Object.keys(merged.headers).find((name) => reservedHeader.test(name))
    if (reserved !== undefined) {
      return yield* ValidationError.single(
        "http_config.headers",
        `'${reserved}' is set by the service and cannot be overridden`
      )
    }
    if (merged.retry_max_backoff_seconds < merged.retry_backoff_seconds) {
      return yield* ValidationError.single(
        "http_config.retry_max_backoff_seconds",
        "must be at least http_config.retry_backoff_seconds"
      )
    }
    return merged
  })

const masked = (values: Readonly<Record<string, string>>) =>
  Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, credentialName.test(name) ? redacted : value])
  )

export const toWebhookResponse = (webhook: WebhookRecord): WebhookResponse => ({
  id: webhook.id,
  bank_id: webhook.bankId,
  url: webhook.url,
  secret: webhook.secret === null ? null : redacted,
  event_types: webhook.eventTypes,
  enabled: webhook.enabled,
  http_config: {
    ...webhook.httpConfig,
    headers: masked(webhook.httpConfig.headers),
    params: masked(webhook.httpConfig.params)
  },
  created_at: webhook.createdAt.toISOString(),
  updated_at: webhook.updatedAt.toISOString()
})

const parseBody = (body: string): unknown => {
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

const toDeliveryView = (delivery: DeliveryRecord): DeliveryView => ({
  id: delivery.id,
  webhook_id: delivery.webhookId,
  url: delivery.url,
  event_id: delivery.eventId,
  event_type: delivery.eventType,
  status: delivery.status,
  attempts: delivery.attempts,
  next_retry_at: delivery.status === "pending" ? delivery.nextAttemptAt : null,
  last_error: delivery.lastError,
  last_response_status: delivery.lastStatusCode,
  last_response_body: delivery.lastResponseBody,
  last_attempt_at: delivery.lastAttemptAt,
  attempt_history: delivery.history.map((attempt) => ({
    attempt: attempt.attempt,
    status_code: attempt.statusCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
    attempted_at: attempt.attemptedAt
  })),
  payload: parseBody(delivery.body),
  created_at: delivery.createdAt,
  updated_at: delivery.updatedAt
})

export class Webhooks extends Context.Service<Webhooks, {
  readonly register: (
    bankId: string,
    request: CreateWebhookRequest
  ) => Effect.Effect<WebhookResponse, NotFound | ValidationError>
  readonly list: (bankId: string) => Effect.Effect<ReadonlyArray<WebhookResponse>, NotFound>
  readonly update: (
    bankId: string,
    id: string,
    request: UpdateWebhookRequest
  ) => Effect.Effect<WebhookResponse, NotFound | ValidationError>
  readonly remove: (bankId: string, id: string) => Effect.Effect<void, NotFound>
  readonly deliveries: (
    bankId: string,
    id: string,
    page: { readonly limit: number; readonly cursor: string | undefined }
  ) => Effect.Effect<{ readonly items: ReadonlyArray<DeliveryView>; readonly next_cursor: string | null }, NotFound>
}>()("engram/webhooks/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const banks = yield* Banks
      const store = yield* WebhookStore
      const delivery = yield* WebhookDelivery
      const config = yield* EngramConfig

      const allowedDestination = (url: string) =>
        checkDestination(url, { denyPrivate: config.webhookDenyPrivate }).pipe(
          Effect.mapError((reason) => ValidationError.single("url", reason))
        )

      const find = (bankId: string, id: string) =>
        Effect.gen(function*() {
          yield* banks.get(bankId)
          const found = yield* store.find(bankId, id)
          if (Option.isNone(found)) return yield* NotFound.of("webhook", id)
          return found.value
        })

      const register = Effect.fn("Webhooks.register")(function*(bankId: string, request: CreateWebhookRequest) {
        yield* banks.get(bankId)
        const httpConfig = yield* resolveHttpConfig(defaultHttpConfig, request.http_config)
        yield* allowedDestination(request.url)
        const created = yield* store.create(bankId, {
          url: request.url,
          secret: request.secret ?? null,
          eventTypes: [...new Set(request.event_types ?? ["consolidation.completed" as const])],
          enabled: request.enabled ?? true,
          httpConfig
        })
        return toWebhookResponse(created)
      })

      const update = Effect.fn("Webhooks.update")(function*(bankId: string, id: string, request: UpdateWebhookRequest) {
        const current = yield* find(bankId, id)
        const httpConfig = yield* resolveHttpConfig(current.httpConfig, request.http_config)
        if (request.url !== undefined) yield* allowedDestination(request.url)
        const saved = yield* store.save({
          ...current,
          url: request.url ?? current.url,
          secret: request.secret === undefined || request.secret === redacted ? current.secret : request.secret,
          eventTypes: request.event_types === undefined ? current.eventTypes : [...new Set(request.event_types)],
          enabled: request.enabled ?? current.enabled,
          httpConfig
        })
        // Deleted between the read and the write.
        if (Option.isNone(saved)) return yield* NotFound.of("webhook", id)
        // Re-enabling a webhook makes its held deliveries due.
        if (saved.value.enabled) yield* delivery.wake
        return toWebhookResponse(saved.value)
      })

      const remove = Effect.fn("Webhooks.remove")(function*(bankId: string, id: string) {
        yield* banks.get(bankId)
        if (!(yield* store.remove(bankId, id))) return yield* NotFound.of("webhook", id)
      })

      const deliveries = Effect.fn("Webhooks.deliveries")(function*(
        bankId: string,
        id: string,
        page: { readonly limit: number; readonly cursor: string | undefined }
      ) {
        const webhook = yield* find(bankId, id)
        const found = yield* store.deliveries(webhook.id, page)
        return { items: found.items.map(toDeliveryView), next_cursor: found.nextCursor }
      })

      return Webhooks.of({
        register,
        list: (bankId) =>
          Effect.andThen(banks.get(bankId), Effect.map(store.list(bankId), (all) => all.map(toWebhookResponse))),
        update,
        remove,
        deliveries
      })
    })
  )
}

/**
 * Turns every bank event into one delivery row per matching enabled webhook, then wakes the worker. It runs in
 * the producer's fiber, so it only writes; a failure is logged and never reaches the producer.
 */
export const WebhookEventListener = BankEvents.listener(Effect.gen(function*() {
  const store = yield* WebhookStore
  const delivery = yield* WebhookDelivery
  return (event) =>
    store.enqueue(event, eventBody(event)).pipe(
      Effect.flatMap((queued) => (queued > 0 ? delivery.wake : Effect.void)),
      Effect.catchCause((cause) => Effect.logWarning("could not queue webhook deliveries", cause)),
      Effect.annotateLogs({ bankId: event.bankId, eventType: event.type, eventId: event.eventId })
    )
}))

/** Everything webhooks need, built on the database, the banks and the event seam. */
export const WebhooksLive = Layer.mergeAll(Webhooks.layer, WebhookEventListener).pipe(
  Layer.provideMerge(WebhookDelivery.layer),
  Layer.provideMerge(WebhookStore.layer)
)
