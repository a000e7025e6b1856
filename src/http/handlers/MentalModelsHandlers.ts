/** REST handlers for mental models, over the `MentalModels` service. */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { MentalModels } from "../../mentalmodels/MentalModels.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

const tagList = (tags: string | ReadonlyArray<string> | undefined) =>
  (tags === undefined ? [] : typeof tags === "string" ? [tags] : tags)
    .flatMap((tag) => tag.split(","))
    .map((tag) => tag.trim())
    .filter((tag) => tag !== "")

export const MentalModelsHandlers = HttpApiBuilder.group(
  EngramApi,
  "mentalModels",
  Effect.fn(function*(handlers) {
    const models = yield* MentalModels
    return handlers.handleAll({
      list: ({ params, query }) =>
        Effect.map(
          models.list(params.bank_id, {
            tags: tagList(query.tags),
            tagsMatch: query.tags_match ?? "any",
            ...paging(query)
          }),
          (items) => ({ items })
        ),
      create: ({ params, payload }) =>
        Effect.map(models.create(params.bank_id, payload), (created) => ({
          mental_model_id: created.mentalModelId,
          operation_id: created.operationId
        })),
      get: ({ params }) => models.get(params.bank_id, params.mental_model_id),
      update: ({ params, payload }) => models.update(params.bank_id, params.mental_model_id, payload),
      delete: ({ params }) =>
        Effect.as(models.remove(params.bank_id, params.mental_model_id), {
          success: true,
          message: `mental model '${params.mental_model_id}' deleted`,
          deleted_count: 1
        }),
      history: ({ params }) => models.history(params.bank_id, params.mental_model_id),
      clear: ({ params }) => models.clear(params.bank_id, params.mental_model_id),
      dryRunRefresh: ({ params }) => models.dryRunRefresh(params.bank_id, params.mental_model_id),
      refresh: ({ params }) =>
        Effect.map(models.refresh(params.bank_id, params.mental_model_id), (queued) => ({
          operation_id: queued.operationId,
          status: "pending" as const
        }))
    })
  })
)
