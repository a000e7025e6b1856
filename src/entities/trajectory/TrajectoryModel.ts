/** Turns one entity's labelled facts into the trajectory clients read: the HMM's numbers with state names. Pure. */
import { createHash } from "node:crypto"
import type { FactFingerprint, TrajectoryObservation } from "./Observations.ts"
import { fitAndDecode } from "./Hmm.ts"
import type { StateLabelling } from "./StateLabelling.ts"
import type { StoredTrajectory } from "./TrajectoryStore.ts"

const previewChars = 400
const round6 = (value: number) => Number(value.toFixed(6))

export const vocabularyHash = (vocabulary: ReadonlyArray<string>) =>
  createHash("sha256").update(JSON.stringify(vocabulary)).digest("hex").slice(0, 32)

export const buildTrajectory = (options: {
  readonly bankId: string
  readonly entityId: string
  readonly observations: ReadonlyArray<TrajectoryObservation>
  readonly labelling: StateLabelling
  readonly alpha: number
  readonly horizon: number
  readonly llmModel: string
  readonly promptVersion: string
  readonly fingerprint: FactFingerprint
}): StoredTrajectory => {
  const vocabulary = options.labelling.vocabulary
  const hmm = fitAndDecode({
    observations: options.observations.map((observation) => observation.embedding),
    labels: options.labelling.labels.map((label) => Math.max(0, vocabulary.indexOf(label))),
    k: vocabulary.length,
    alpha: options.alpha,
    horizon: options.horizon
  })
  return {
    entity_id: options.entityId,
    bank_id: options.bankId,
    state_vocabulary: vocabulary,
    vocabulary_hash: vocabularyHash(vocabulary),
    transition_matrix: hmm.transitions.map((row) => row.map(round6)),
    current_state: vocabulary[hmm.path.at(-1) ?? 0]!,
    viterbi_path: hmm.path.map((state, t) => ({
      unit_id: options.observations[t]!.unitId,
      state: vocabulary[state]!,
      occurred_sort_at: options.observations[t]!.sortAt.toISOString(),
      fact_preview: options.observations[t]!.text.slice(0, previewChars)
    })),
    forecast_horizon: options.horizon,
    forecast_distribution: Object.fromEntries(vocabulary.map((state, index) => [state, round6(hmm.forecast[index]!)])),
    forward_log_prob: round6(hmm.forwardLogProb),
    anomaly_score: round6(hmm.anomalyScore),
    llm_model: options.llmModel,
    prompt_version: options.promptVersion,
    factCount: options.fingerprint.factCount,
    lastSeq: options.fingerprint.lastSeq
  }
}
