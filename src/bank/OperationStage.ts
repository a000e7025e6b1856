/**
 * The stage a running operation has reached and its progress (`{done, total}`), shown by GET operations/{id}.
 * Written by task handlers as they go; a write never fails the task (progress is information, not state).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface StageProgress {
  readonly done: number
  readonly total: number
}

export const setOperationStage = (operationId: string, stage: string, progress: StageProgress | null = null) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE operations SET stage = ${stage},
      stage_progress = ${progress === null ? null : JSON.stringify(progress)}::jsonb, stage_updated_at = now()
      WHERE id = ${operationId}`
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("recording an operation's stage failed", cause)))
