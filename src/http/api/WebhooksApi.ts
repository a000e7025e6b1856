/** Webhook routes: register, list, partially update and delete a bank's webhooks, and page through deliveries. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId, DeleteResponse } from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import {
  CreateWebhookRequest,
  UpdateWebhookRequest,
  WebhookDeliveryListResponse,
  WebhookListResponse,
  WebhookResponse
} from "../../webhooks/WebhookSchemas.ts"

const webhook = { bank_id: BankId, webhook_id: Schema.String }

/**
 * An ISO 8601 date-time with its zone, as `next_cursor` hands it out (microseconds kept). It goes to the database
 * as text, so it is checked strictly: `Date.parse` also takes "1" or "March 7", which PostgreSQL refuses.
 */
const isoDateTime =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-](0\d|1[0-4]):?[0-5]\d)$/

const isIsoDateTime = (value: string) => {
  const match = isoDateTime.exec(value)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  // Rejects days the month does not have (2024-02-30), which Date would roll over.
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

const DeliveryCursor = Schema.String.check(
  Schema.makeFilter((value: string) =>
    isIsoDateTime(value) || "must be the created_at of the last delivery of the previous page (an ISO 8601 date-time)"
  )
)

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/v1/default/banks/:bank_id/webhooks", {
      params: { bank_id: BankId },
      payload: CreateWebhookRequest,
      success: WebhookResponse.pipe(HttpApiSchema.status(201)),
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Register a webhook. Events are POSTed as JSON, signed with HMAC-SHA256 in `X-Engram-Signature` when a " +
        "secret is set; delivery is durable, at least once, retried with exponential backoff."
    ),
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/webhooks", {
      params: { bank_id: BankId },
      success: WebhookListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.patch("update", "/v1/default/banks/:bank_id/webhooks/:webhook_id", {
      params: webhook,
      payload: UpdateWebhookRequest,
      success: WebhookResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Partial update: only the fields present change. `secret` omitted keeps it, `null` clears it."
    ),
    HttpApiEndpoint.delete("delete", "/v1/default/banks/:bank_id/webhooks/:webhook_id", {
      params: webhook,
      success: DeleteResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Delete the webhook and its delivery history; pending deliveries are dropped."),
    HttpApiEndpoint.get("deliveries", "/v1/default/banks/:bank_id/webhooks/:webhook_id/deliveries", {
      params: webhook,
      query: {
        limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 }))),
        cursor: Schema.optionalKey(DeliveryCursor)
      },
      success: WebhookDeliveryListResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Newest first; `limit` defaults to 50 (max 200). Pass `next_cursor` (the `created_at` of the last item) as " +
        "`cursor` for the next page. Each delivery lists every attempt with status code, duration and error."
    )
  )
  .annotateMerge(OpenApi.annotations({ title: "Webhooks", description: "Event delivery to HTTP endpoints" }))
{}
