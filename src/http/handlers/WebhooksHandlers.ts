/** REST handlers for webhooks over the `Webhooks` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { EngramApi } from "../api/Api.ts"

export const WebhooksHandlers = HttpApiBuilder.group(
  EngramApi,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks
    return handlers.handleAll({
      create: ({ params, payload }) => webhooks.register(params.bank_id, payload),
      list: ({ params }) => Effect.map(webhooks.list(params.bank_id), (items) => ({ items })),
      update: ({ params, payload }) => webhooks.update(params.bank_id, params.webhook_id, payload),
      delete: ({ params }) =>
        Effect.as(webhooks.remove(params.bank_id, params.webhook_id), {
          success: true,
          message: `webhook '${params.webhook_id}' deleted`,
          deleted_count: 1
        }),
      deliveries: ({ params, query }) =>
        webhooks.deliveries(params.bank_id, params.webhook_id, { limit: query.limit ?? 50, cursor: query.cursor })
    })
  })
)
