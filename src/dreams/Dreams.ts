/**
 * The dreams API shared by the REST handlers and in-process callers: trigger a run (a durable operation), list
 * runs, statistics from real aggregates, record a prediction's outcome, and review a promotion proposal (approve
 * makes a mental-model proposal a mental model and any other a memory tagged with its run; approving twice is a
 * 400). Also the event trigger: a consolidation that created or updated observations queues a dream run.
 */
import { Clock, Context, Effect, Layer, Option } from "effect"
import { Banks } from "../bank/Banks.ts"
import { BankStore } from "../bank/BankStore.ts"
import type {
  DreamRunType,
  DreamStatsResponse,
  DreamTriggerSource,
  PredictionOutcomeRequest,
  ProposalReviewRequest
} from "../domain/Dream.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import { BankEvents } from "../events/BankEvents.ts"
import { Retain } from "../memory/retain/Retain.ts"
import { MentalModels } from "../mentalmodels/MentalModels.ts"
import { effectiveDreamSettings } from "./DreamConfig.ts"
import { makeDreamQueue } from "./DreamQueue.ts"
import { outcomeView, predictionView, proposalView, runView } from "./DreamStore.ts"
import { DreamStore } from "./DreamStore.ts"

const reviewStatus = { approve: "approved", reject: "rejected", request_more_evidence: "needs_more_evidence" } as const

export class Dreams extends Context.Service<Dreams, {
  readonly trigger: (bankId: string, source: DreamTriggerSource, runType: DreamRunType) => Effect.Effect<
    { readonly operation_id: string; readonly deduplicated: boolean; readonly status: string },
    NotFound
  >
  readonly list: (bankId: string, limit: number) => Effect.Effect<ReadonlyArray<ReturnType<typeof runView>>, NotFound>
  readonly stats: (bankId: string) => Effect.Effect<typeof DreamStatsResponse.Type, NotFound>
  readonly recordOutcome: (bankId: string, predictionId: string, request: PredictionOutcomeRequest) => Effect.Effect<
    { readonly prediction: ReturnType<typeof predictionView>; readonly outcome: ReturnType<typeof outcomeView> },
    NotFound | ValidationError
  >
  readonly review: (bankId: string, proposalId: string, request: ProposalReviewRequest) => Effect.Effect<
    ReturnType<typeof proposalView>,
    NotFound | ValidationError | ServiceUnavailable
  >
}>()("engram/dreams/Dreams") {
  static readonly layer = Layer.effect(
    Dreams,
    Effect.gen(function*() {
      const banks = yield* Banks
      const store = yield* DreamStore
      const retain = yield* Retain
      const mentalModels = yield* MentalModels
      const queue = yield* makeDreamQueue

      const trigger = Effect.fn("Dreams.trigger")(
        function*(bankId: string, source: DreamTriggerSource, runType: DreamRunType) {
          yield* banks.get(bankId)
          const queued = yield* queue.submitDream(bankId, source, runType)
          return { operation_id: queued.operationId, deduplicated: queued.deduplicated, status: "pending" }
        }
      )

      const list = Effect.fn("Dreams.list")(function*(bankId: string, limit: number) {
        yield* banks.get(bankId)
        return yield* store.listRuns(bankId, limit)
      })

      const stats = Effect.fn("Dreams.stats")(function*(bankId: string) {
        yield* banks.get(bankId)
        const row = yield* store.stats(bankId)
        const n = (key: string) => Number(row[key] ?? 0)
        const resolved = n("confirmed") + n("contradicted")
        const rate = resolved === 0 ? 0 : n("confirmed") / resolved
        const last = row["lastRunAt"]
        return {
          bank_id: bankId,
          total_runs: n("totalRuns"),
          last_run_at: last instanceof Date ? last.toISOString() : null,
          avg_quality: Number(n("avgQuality").toFixed(3)),
          avg_tokens: Number(n("avgTokens").toFixed(1)),
          avg_output_tokens: Number(n("avgOutputTokens").toFixed(1)),
          // Distillation is review-based here: a proposal approved into the bank is a distilled item.
          distillation_pass_rate: n("reviewed") === 0 ? 0 : Number((n("distilled") / n("reviewed")).toFixed(3)),
          distilled_count: n("distilled"),
          duplicate_suppression_count: n("duplicateSuppressionCount"),
          prediction_confirmation_rate: Number(rate.toFixed(3)),
          unresolved_prediction_backlog: n("backlog"),
          avg_novelty: Number(n("avgNovelty").toFixed(3)),
          failed_run_count: n("failedRunCount"),
          validation_rate: Number(rate.toFixed(3))
        }
      })

      const recordOutcome = Effect.fn("Dreams.recordOutcome")(function*(
        bankId: string,
        predictionId: string,
        request: PredictionOutcomeRequest
      ) {
        yield* banks.get(bankId)
        const found = yield* store.prediction(bankId, predictionId)
        if (Option.isNone(found)) return yield* NotFound.of("prediction", predictionId)
        const at = new Date(yield* Clock.currentTimeMillis)
        const recorded = yield* store.recordOutcome({
          bankId,
          predictionId,
          predictionStatus: request.status === "request_more_evidence" ? "unresolved" : request.status,
          outcomeStatus: request.status,
          note: request.note ?? null,
          evidenceIds: request.evidence_ids ?? [],
          recordedBy: "user",
          onlyOpen: false,
          at
        })
        if (Option.isNone(recorded)) return yield* NotFound.of("prediction", predictionId)
        return { prediction: predictionView(recorded.value.prediction), outcome: outcomeView(recorded.value.outcome) }
      })

      /** Promotes an approved proposal into the bank; returns what was created. */
      const promote = (
        bankId: string,
        proposal: ReturnType<typeof proposalView>
      ): Effect.Effect<Record<string, unknown>, NotFound | ValidationError | ServiceUnavailable> =>
        proposal.proposal_type === "mental_model"
          ? mentalModels.create(bankId, {
            name: proposal.title.slice(0, 200),
            source_query: proposal.content.slice(0, 2000),
            tags: [...new Set(["dream", ...proposal.tags])]
          }).pipe(
            Effect.map((created) => ({
              created_mental_model_id: created.mentalModelId,
              operation_id: created.operationId
            })),
            Effect.catchTag("Conflict", (conflict) => Effect.fail(ValidationError.single("proposal", conflict.detail)))
          )
          : retain.retainNow(bankId, {
            items: [{
              content: proposal.content,
              context: `dream_proposal:${proposal.proposal_type}`,
              tags: [...new Set(["dream", `dream_run:${proposal.run_id}`, ...proposal.tags])]
            }]
          }).pipe(Effect.map((outcome) => ({ created_memories: outcome.created })))

      const review = Effect.fn("Dreams.review")(
        function*(bankId: string, proposalId: string, request: ProposalReviewRequest) {
          yield* banks.get(bankId)
          const found = yield* store.proposal(bankId, proposalId)
          if (Option.isNone(found)) return yield* NotFound.of("proposal", proposalId)
          const before = proposalView(found.value)
          if (before.review_status === "approved") {
            return yield* ValidationError.single("action", `proposal '${proposalId}' is already approved`)
          }
          const at = new Date(yield* Clock.currentTimeMillis)
          const note = request.note ?? null
          const base = { note, action: request.action }
          // The status moves first (only from not-approved), so two approvals racing promote once.
          const moved = yield* store.reviewProposal(bankId, proposalId, reviewStatus[request.action], note, base, at)
          if (Option.isNone(moved)) {
            return yield* ValidationError.single("action", `proposal '${proposalId}' is already approved`)
          }
          if (request.action !== "approve") return proposalView(moved.value)
          const promoted = yield* promote(bankId, before).pipe(
            // The promotion failed: the proposal goes back to what it was, so it can be approved again.
            Effect.tapError(() =>
              store.settleProposal(bankId, proposalId, before.review_status, before.approval_metadata)
            )
          )
          const settled = yield* store.settleProposal(bankId, proposalId, "approved", { ...base, ...promoted })
          return proposalView(Option.getOrElse(settled, () => moved.value))
        }
      )

      return Dreams.of({ trigger, list, stats, recordOutcome, review })
    })
  )
}

/** After a consolidation that created or updated observations, banks with event-triggered dreams queue a run. */
export const DreamAfterConsolidation = BankEvents.listener(Effect.gen(function*() {
  const bankStore = yield* BankStore
  const queue = yield* makeDreamQueue
  return (event) => {
    if (event.type !== "consolidation.completed") return Effect.void
    const changed = Number(event.data["observations_created"] ?? 0) + Number(event.data["observations_updated"] ?? 0)
    if (!(changed > 0)) return Effect.void
    return Effect.gen(function*() {
      const bank = yield* bankStore.find(event.bankId)
      if (Option.isNone(bank)) return
      const settings = effectiveDreamSettings(bank.value.dreamSettings)
      if (!settings.enabled || settings.trigger_mode === "cron") return
      yield* queue.submitDream(event.bankId, "event", "dream")
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("queueing a dream run after consolidation failed", cause)))
  }
}))
