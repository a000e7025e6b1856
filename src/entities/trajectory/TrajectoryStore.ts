/** Reads and writes the `entity_trajectories` table; one row per entity, replaced on every recompute. */
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { EntityTrajectoryResponse } from "../../domain/EntityState.ts"

export interface StoredTrajectory extends Omit<EntityTrajectoryResponse, "computed_at"> {
  readonly factCount: number
  readonly lastSeq: number
}

interface TrajectoryRow {
  readonly bankId: string
  readonly entityId: string
  readonly computedAt: Date
  readonly stateVocabulary: Array<string>
  readonly vocabularyHash: string
  readonly transitionMatrix: Array<Array<number>>
  readonly currentState: string
  readonly viterbiPath: EntityTrajectoryResponse["viterbi_path"]
  readonly forecastHorizon: number
  readonly forecastDistribution: Record<string, number>
  readonly forwardLogProb: number | null
  readonly anomalyScore: number | null
  readonly llmModel: string
  readonly promptVersion: string
}

const toResponse = (row: TrajectoryRow): EntityTrajectoryResponse => ({
  entity_id: row.entityId,
  bank_id: row.bankId,
  computed_at: row.computedAt.toISOString(),
  state_vocabulary: row.stateVocabulary,
  vocabulary_hash: row.vocabularyHash,
  transition_matrix: row.transitionMatrix,
  current_state: row.currentState,
  viterbi_path: row.viterbiPath,
  forecast_horizon: row.forecastHorizon,
  forecast_distribution: row.forecastDistribution,
  forward_log_prob: row.forwardLogProb,
  anomaly_score: row.anomalyScore,
  llm_model: row.llmModel,
  prompt_version: row.promptVersion
})

export const findTrajectory = Effect.fn("TrajectoryStore.find")(function*(bankId: string, entityId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<TrajectoryRow>`SELECT bank_id, entity_id, computed_at, state_vocabulary, vocabulary_hash,
      transition_matrix, current_state, viterbi_path, forecast_horizon, forecast_distribution, forward_log_prob,
      anomaly_score, llm_model, prompt_version
    FROM entity_trajectories WHERE bank_id = ${bankId} AND entity_id = ${entityId}`
  return Option.map(Option.fromNullishOr(rows[0]), toResponse)
})

export const saveTrajectory = Effect.fn("TrajectoryStore.save")(function*(trajectory: StoredTrajectory) {
  const sql = yield* SqlClient.SqlClient
  const updated = {
    stateVocabulary: JSON.stringify(trajectory.state_vocabulary),
    vocabularyHash: trajectory.vocabulary_hash,
    transitionMatrix: JSON.stringify(trajectory.transition_matrix),
    currentState: trajectory.current_state,
    viterbiPath: JSON.stringify(trajectory.viterbi_path),
    forecastHorizon: trajectory.forecast_horizon,
    forecastDistribution: JSON.stringify(trajectory.forecast_distribution),
    forwardLogProb: trajectory.forward_log_prob,
    anomalyScore: trajectory.anomaly_score,
    llmModel: trajectory.llm_model,
    promptVersion: trajectory.prompt_version,
    factCount: trajectory.factCount,
    lastSeq: trajectory.lastSeq
  }
  yield* sql`INSERT INTO entity_trajectories ${
    sql.insert({ bankId: trajectory.bank_id, entityId: trajectory.entity_id, ...updated })
  }
    ON CONFLICT (bank_id, entity_id) DO UPDATE SET ${sql.update(updated)}, computed_at = now()`
})
