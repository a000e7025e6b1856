/** REST handler of forget, over the `Forget` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Forget } from "../../memory/forgetting/Forget.ts"
import { EngramApi } from "../api/Api.ts"

export const ForgetHandlers = HttpApiBuilder.group(
  EngramApi,
  "forgetting",
  Effect.fn(function*(handlers) {
    const forgetting = yield* Forget
    return handlers.handleAll({
      forget: ({ params, payload }) => forgetting.forget(params.bank_id, payload)
    })
  })
)
