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

const DeliveryCursor = Schema.String.check(Schema.makeFilter((value: string) =>
  !Number.isNaN(Date.parse(value)) || "must be the created_at of the last delivery of the previous page"
))

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
