/** REST handlers for the sub-routine: thin translations to the `SubRoutine` service, gated by SERVICE_API_BRAIN_ENABLED. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SubRoutine } from "../../activity/SubRoutine.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { NotFound } from "../../domain/Errors.ts"
import { EngramApi } from "../api/Api.ts"

/** Brain routes answer 404 naming the setting when the brain runtime is turned off. */
export const brainEnabled = Effect.gen(function*() {
  const config = yield* EngramConfig
  if (config.brain.enabled) return
  return yield* new NotFound({
    detail: "the brain runtime is disabled: set SERVICE_API_BRAIN_ENABLED=true to serve this route",
    resource: "brain runtime",
    id: "SERVICE_API_BRAIN_ENABLED"
  })
})

export const SubRoutineHandlers = HttpApiBuilder.group(
  EngramApi,
  "subRoutine",
  Effect.fn(function*(handlers) {
    const subRoutine = yield* SubRoutine
    const config = yield* EngramConfig
    const gate = brainEnabled.pipe(Effect.provideService(EngramConfig, config))

    return handlers.handleAll({
      run: ({ params, payload }) =>
        gate.pipe(
          Effect.andThen(subRoutine.request(params.bank_id, {
            mode: payload?.mode ?? "incremental",
            horizonHours: payload?.horizon_hours ?? 24,
            forceRebuild: payload?.force_rebuild ?? false
          })),
          Effect.map((queued) => ({
            operation_id: queued.operationId,
            deduplicated: queued.deduplicated,
            status: queued.status
          }))
        ),
      histogram: ({ params }) => gate.pipe(Effect.andThen(subRoutine.histogram(params.bank_id))),
      predictions: ({ params, query }) =>
        gate.pipe(Effect.andThen(subRoutine.predictions(params.bank_id, query.horizon_hours ?? 24)))
    })
  })
)
