/**
 * The webhook resource as clients send and receive it: registration and partial update bodies (with their
 * validation rules), the webhook as returned (secret redacted), `http_config` with its defaults, and the
 * delivery list with every attempt.
 */
import { Schema } from "effect"
import { eventTypes } from "../events/BankEvents.ts"

export const WebhookEventType = Schema.Literals(eventTypes)

const WebhookUrl = Schema.String.check(
  Schema.makeFilter((value: string) => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return "must be an absolute http:// or https:// URL"
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return "must use http or https"
    if (url.username !== "" || url.password !== "") return "must not carry credentials; use http_config.headers"
    return true
  })
).annotate({ description: "HTTP or HTTPS endpoint that receives the events" })

/** A header name is an HTTP token; values never contain line breaks (no header injection). */
const HeaderName = Schema.String.check(Schema.isPattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, {
  message: "must be a valid HTTP header name"
}))
const HeaderValue = Schema.String.check(
  Schema.makeFilter((value: string) => !/[\r\n\0]/.test(value) || "must not contain line breaks")
)

const seconds = (minimum: number, maximum: number) => Schema.Number.check(Schema.isBetween({ minimum, maximum }))

/** The value a credential-like header or parameter (and the secret) reads back as; sent back, it keeps the value. */
export const redacted = "********"

const deliverySettings = {
  method: Schema.optionalKey(Schema.Literals(["POST"]).annotate({ description: "Always POST (the default)" })),
  timeout_seconds: Schema.optionalKey(seconds(0.05, 300).annotate({ description: "Per-request timeout; default 30" })),
  max_attempts: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })).annotate({
      description: "Attempts before a delivery is marked failed; default 8"
    })
  ),
  retry_backoff_seconds: Schema.optionalKey(
    seconds(0.01, 3600).annotate({
      description: "Wait before the second attempt; doubles after each failure; default 5"
    })
  ),
  retry_max_backoff_seconds: Schema.optionalKey(
    seconds(0.01, 86400).annotate({
      description: "Cap on the wait between attempts; default 600"
    })
  )
}

export const HttpConfigInput = Schema.Struct({
  ...deliverySettings,
  headers: Schema.optionalKey(
    Schema.Record(HeaderName, HeaderValue).annotate({
      description: "Extra request headers (Content-Type, Host and X-Engram-* are set by the service)"
    })
  ),
  params: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.String).annotate({
      description: "Extra query parameters added to the URL"
    })
  )
}).annotate({ identifier: "WebhookHttpConfig" })
export type HttpConfigInput = typeof HttpConfigInput.Type

/**
 * `http_config` in a partial update: the fields present replace the current ones; headers and params are merged
 * into the current ones name by name, `null` removes one, and the redacted value read back keeps it.
 */
export const HttpConfigPatch = Schema.Struct({
  ...deliverySettings,
  headers: Schema.optionalKey(
    Schema.Record(HeaderName, Schema.NullOr(HeaderValue)).annotate({
      description: `Headers to add or change; null removes one, "${redacted}" keeps its current value`
    })
  ),
  params: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.NullOr(Schema.String)).annotate({
      description: `Query parameters to add or change; null removes one, "${redacted}" keeps its current value`
    })
  )
}).annotate({ identifier: "WebhookHttpConfigPatch" })
export type HttpConfigPatch = typeof HttpConfigPatch.Type

/** `http_config` with every default applied: what is stored and what the delivery worker reads. */
export interface HttpConfig {
  readonly method: "POST"
  readonly timeout_seconds: number
  readonly headers: Readonly<Record<string, string>>
  readonly params: Readonly<Record<string, string>>
  readonly max_attempts: number
  readonly retry_backoff_seconds: number
  readonly retry_max_backoff_seconds: number
}

export const defaultHttpConfig: HttpConfig = {
  method: "POST",
  timeout_seconds: 30,
  headers: {},
  params: {},
  max_attempts: 8,
  retry_backoff_seconds: 5,
  retry_max_backoff_seconds: 600
}

export const HttpConfigResponse = Schema.Struct({
  method: Schema.String,
  timeout_seconds: Schema.Number,
  headers: Schema.Record(Schema.String, Schema.String),
  params: Schema.Record(Schema.String, Schema.String),
  max_attempts: Schema.Int,
  retry_backoff_seconds: Schema.Number,
  retry_max_backoff_seconds: Schema.Number
}).annotate({ identifier: "WebhookHttpConfigResponse" })

export const CreateWebhookRequest = Schema.Struct({
  url: WebhookUrl,
  secret: Schema.optionalKey(
    Schema.NullOr(Schema.String.check(Schema.isMinLength(1))).annotate({
      description: "HMAC-SHA256 signing secret; never returned"
    })
  ),
  event_types: Schema.optionalKey(
    Schema.Array(WebhookEventType).check(Schema.isMinLength(1)).annotate({
      description: "Events to deliver; default [\"consolidation.completed\"]"
    })
  ),
  enabled: Schema.optionalKey(Schema.Boolean),
  http_config: Schema.optionalKey(HttpConfigInput)
}).annotate({ identifier: "CreateWebhookRequest" })
export type CreateWebhookRequest = typeof CreateWebhookRequest.Type

/**
 * Partial update: only the fields present change; `secret: null` clears the secret, an absent one (or the
 * redacted value a read returned) keeps it.
 */
export const UpdateWebhookRequest = Schema.Struct({
  url: Schema.optionalKey(WebhookUrl),
  secret: Schema.optionalKey(
    Schema.NullOr(Schema.String.check(Schema.isMinLength(1))).annotate({
      description: `null clears the secret; omitted or "${redacted}" keeps it`
    })
  ),
  event_types: Schema.optionalKey(Schema.Array(WebhookEventType).check(Schema.isMinLength(1))),
  enabled: Schema.optionalKey(Schema.Boolean),
  http_config: Schema.optionalKey(HttpConfigPatch)
}).annotate({ identifier: "UpdateWebhookRequest" })
export type UpdateWebhookRequest = typeof UpdateWebhookRequest.Type

export const WebhookResponse = Schema.Struct({
  id: Schema.String,
  bank_id: Schema.NullOr(Schema.String),
  url: Schema.String,
  secret: Schema.NullOr(Schema.String).annotate({ description: "\"********\" when a secret is set, else null" }),
  event_types: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  http_config: HttpConfigResponse,
  created_at: Schema.NullOr(Schema.String),
  updated_at: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookResponse" })
export type WebhookResponse = typeof WebhookResponse.Type

export const WebhookListResponse = Schema.Struct({
  items: Schema.Array(WebhookResponse)
}).annotate({ identifier: "WebhookListResponse" })

export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  attempted_at: Schema.String
}).annotate({ identifier: "WebhookDeliveryAttempt" })

export const DeliveryStatus = Schema.Literals(["pending", "completed", "failed"])

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  url: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  next_retry_at: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  last_response_status: Schema.NullOr(Schema.Int),
  last_response_body: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.String),
  attempt_history: Schema.Array(DeliveryAttempt),
  payload: Schema.Unknown,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookDeliveryListResponse = Schema.Struct({
  items: Schema.Array(WebhookDelivery),
  next_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "WebhookDeliveryListResponse" })
