/** REST handlers for reflect, over the `Reflect` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Reflect } from "../../reflect/Reflect.ts"
import { EngramApi } from "../api/Api.ts"

export const ReflectHandlers = HttpApiBuilder.group(
  EngramApi,
  "reflect",
  Effect.fn(function*(handlers) {
    const reflect = yield* Reflect
    return handlers.handleAll({
      reflect: ({ params, payload }) => reflect.reflect(params.bank_id, payload),
      submit: ({ params, payload }) =>
        Effect.map(reflect.submit(params.bank_id, payload), ({ operationId }) => ({
          operation_id: operationId,
          status: "pending" as const
        }))
    })
  })
)
