/** REST handlers for reflect, over the `Reflect` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Reflect } from "../../reflect/Reflect.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { EngramApi } from "../api/Api.ts"

export const ReflectHandlers = HttpApiBuilder.group(
  EngramApi,
  "reflect",
  Effect.fn(function*(handlers) {
    const reflect = yield* Reflect
    // `branch_name` reflects over a memory repo branch's workspace without checking it out.
    const repos = yield* MemoryRepos
    return handlers.handleAll({
      reflect: Effect.fn(function*({ params, payload }) {
        const { branch_name, ...request } = payload
        return yield* reflect.reflect(yield* repos.readBank(params.bank_id, branch_name), request)
      }),
      submit: ({ params, payload }) =>
        Effect.map(reflect.submit(params.bank_id, payload), ({ operationId }) => ({
          operation_id: operationId,
          status: "pending" as const
        }))
    })
  })
)
