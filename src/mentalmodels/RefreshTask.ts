/**
 * The `refresh_mental_model` task's name and payload, on their own so that what queues a refresh without the
 * mental-model service (a template, a memory deletion below the reflect layers) need not import the service.
 */
import type { RefreshReason } from "../domain/MentalModel.ts"

export const refreshTaskType = "refresh_mental_model"

/** What a `refresh_mental_model` operation carries. */
export interface RefreshPayload {
  readonly mental_model_id: string
  readonly reason: RefreshReason
}
