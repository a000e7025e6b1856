/** REST handlers for anomalies: thin translations between the HTTP contract and the `Anomalies` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Anomalies } from "../../memory/anomaly/Anomalies.ts"
import { EngramApi } from "../api/Api.ts"

export const AnomalyHandlers = HttpApiBuilder.group(
  EngramApi,
  "anomaly",
  Effect.fn(function*(handlers) {
    const anomalies = yield* Anomalies

    return handlers.handleAll({
      intelligence: ({ params, payload }) => anomalies.intelligence(params.bank_id, payload),
      acknowledge: ({ params, payload }) =>
        anomalies.act(params.bank_id, params.event_id, "acknowledge", payload?.note ?? null),
      resolve: ({ params, payload }) =>
        anomalies.act(params.bank_id, params.event_id, "resolve", payload?.note ?? null),
      suppress: ({ params, payload }) =>
        anomalies.act(params.bank_id, params.event_id, "suppress", payload?.note ?? null)
    })
  })
)
