/**
 * The `dream_generation` task: gate (enabled, cooldown for event and schedule triggers), gather evidence, generate
 * (one structured call on the reflect model; the deterministic generator without a model, or when the call fails
 * or its answer cannot be repaired), score, render and store the run. It never fails for a model's sake, and it is
 * idempotent: a re-run of the same operation returns the run it already stored.
 */
import { Clock, Effect, Schema } from "effect"
import { Banks } from "../bank/Banks.ts"
import { DreamRunType, DreamTriggerSource } from "../domain/Dream.ts"
import { Anomalies } from "../memory/anomaly/Anomalies.ts"
import { GraphIntelligence } from "../memory/GraphIntelligence.ts"
import { Recall } from "../memory/recall/Recall.ts"
import { MentalModels } from "../mentalmodels/MentalModels.ts"
import { Llm } from "../models/Llm.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { deterministicDream } from "./DeterministicDream.ts"
import { effectiveDreamSettings } from "./DreamConfig.ts"
import { evidenceBasis, gatherEvidence } from "./DreamEvidence.ts"
import { generateWithLlm } from "./DreamLlm.ts"
import { renderNarrativeHtml } from "./DreamNarrative.ts"
import { dreamTask } from "./DreamQueue.ts"
import type { DreamDraft, ScoredDream } from "./DreamResult.ts"
import { confidenceOf, round3, scoreDream } from "./DreamResult.ts"
import { DreamStore } from "./DreamStore.ts"
import { DreamWakeups } from "./DreamWakeups.ts"

const Payload = Schema.Struct({
  trigger_source: Schema.optionalKey(DreamTriggerSource),
  run_type: Schema.optionalKey(DreamRunType)
})
const decodePayload = Schema.decodeUnknownEffect(Payload)

const lowSignalQuality = 0.22

export const DreamGenerationTask = TaskRegistry.handler(
  dreamTask,
  Effect.gen(function*() {
    const banks = yield* Banks
    const store = yield* DreamStore
    const llm = yield* Llm
    const wakeups = yield* DreamWakeups
    const sources = {
      recall: yield* Recall,
      graph: yield* GraphIntelligence,
      anomalies: yield* Anomalies,
      mentalModels: yield* MentalModels
    }

    return (operation) =>
      Effect.gen(function*() {
        const bankId = operation.bankId
        const existing = yield* store.runOfOperation(operation.id)
        if (existing._tag === "Some") {
          return { run_id: existing.value["id"], status: existing.value["status"], already_stored: true }
        }
        const payload = yield* decodePayload(operation.payload).pipe(
          Effect.mapError(() => new TaskFailure({ message: "invalid dream_generation payload", retryable: false }))
        )
        const source = payload.trigger_source ?? "manual"
        const runType = payload.run_type ?? "dream"
        const bank = yield* banks.get(bankId).pipe(
          Effect.mapError(() => new TaskFailure({ message: `bank '${bankId}' not found`, retryable: false }))
        )
        const settings = effectiveDreamSettings(bank.dreamSettings)
        if (!settings.enabled) return { skipped: true, reason: "dream_disabled" }
        const now = yield* Clock.currentTimeMillis
        // A manual trigger runs whenever dreams are enabled; automatic ones respect the cooldown.
        if (source !== "manual") {
          const last = yield* store.lastRunAt(bankId, source, ["success", "low_signal", "duplicate_low_novelty"])
          if (last._tag === "Some" && now - last.value.getTime() < settings.cooldown_minutes * 60_000) {
            return { skipped: true, reason: "cooldown_active" }
          }
        }

        const history = yield* store.history(bankId, settings.validation_lookback_days, new Date(now))
        const evidence = yield* gatherEvidence(sources, bankId, settings, history, now)
        const facts = evidence.items.filter((item) => item.type !== "mental_model").length

        let generator: "llm" | "deterministic" = "deterministic"
        let llmError: string | null = null
        let usage = { inputTokens: 0, outputTokens: 0 }
        let scored: ScoredDream
        if (facts < settings.min_recall_results) {
          const draft: DreamDraft = { ...deterministicDream(evidence, settings), predictions: [], proposals: [] }
          const confidence = confidenceOf(
            draft,
            evidence.items.length,
            evidence.contradictions.length,
            history.calibration,
            0
          )
          scored = { draft, status: "low_signal", novelty: 0, quality: lowSignalQuality, confidence }
        } else {
          let draft = deterministicDream(evidence, settings)
          let qualityText = draft.narrative
          if (llm.available("reflect")) {
            const answer = yield* generateWithLlm(bankId, operation.id, evidence, settings).pipe(
              Effect.provideService(Llm, llm),
              Effect.map((value) => ({ ok: true as const, value })),
              Effect.catch((error) => Effect.succeed({ ok: false as const, message: error.message.slice(0, 1000) }))
            )
            if (answer.ok) {
              generator = "llm"
              draft = answer.value.draft
              qualityText = draft.narrative.trim() !== "" ? draft.narrative : draft.summary
              usage = { inputTokens: answer.value.usage.inputTokens, outputTokens: answer.value.usage.outputTokens }
            } else {
              llmError = answer.message
              yield* Effect.logWarning("dream generation fell back to the deterministic run", { reason: llmError })
            }
          }
          scored = scoreDream(draft, evidence, settings, qualityText)
        }

        const runId = crypto.randomUUID()
        const createdAt = new Date(now)
        const { draft } = scored
        const narrativeHtml = scored.status === "failed_validation" ? null : renderNarrativeHtml(draft, {
          bankId,
          runId,
          quality: scored.quality,
          at: createdAt.toISOString(),
          tier: evidence.maturity,
          generator,
          maxBytes: settings.max_artifact_bytes
        })
        yield* store.insertRun({
          id: runId,
          bankId,
          operationId: operation.id,
          status: scored.status,
          runType,
          triggerSource: source,
          generator,
          summary: draft.summary,
          narrativeHtml,
          evidenceBasis: evidenceBasis(evidence),
          signals: {
            hypotheses: draft.hypotheses,
            risks: draft.risks,
            opportunities: draft.opportunities,
            recommended_validations: draft.validations,
            candidate_state_changes: draft.state_changes
          },
          growth: draft.growth,
          validations: draft.validations.map((step) => ({ step, status: "recommended" })),
          confidence: scored.confidence,
          novelty: round3(scored.novelty),
          quality: round3(scored.quality),
          maturityTier: evidence.maturity,
          failureReason: scored.status === "failed_validation"
            ? `quality ${scored.quality.toFixed(3)} is below the threshold ${settings.quality_threshold.toFixed(2)}`
            : null,
          evidenceIds: evidence.items.map((item) => item.id),
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          metadata: {
            llm_error: llmError,
            dream_experience: settings.dream_experience,
            quality_threshold: settings.quality_threshold,
            auto_write_posture: settings.auto_write_posture,
            promotion_gate: settings.promotion_gate,
            prompt_template_version: settings.prompt_template_version,
            input_refs: evidence.items.map((item) => ({ id: item.id, type: item.type }))
          },
          createdAt,
          predictions: draft.predictions,
          proposals: draft.proposals
        })
        // New predictions bring new expiry times, a trance run a new schedule: the scheduler re-reads the bank.
        yield* wakeups.notify(bankId)
        return {
          run_id: runId,
          status: scored.status,
          generator,
          quality_score: round3(scored.quality),
          predictions: draft.predictions.length,
          proposals: draft.proposals.length,
          ...(llmError === null ? {} : { fallback_reason: llmError })
        }
      })
  })
)
