/**
 * MCP tools for dreams (evidence-grounded foresight runs): queue a run, read the runs and their statistics, record
 * what became of a prediction and review a promotion proposal. They call `Dreams`, as the REST handlers do; a run
 * is a background operation, so triggering answers with the queued operation and never waits for it.
 */
import { Effect, Schema } from "effect"
import {
  DreamRunType,
  DreamTriggerSource,
  PredictionOutcomeRequest,
  ProposalReviewRequest
} from "../../domain/Dream.ts"
import { Dreams } from "../../dreams/Dreams.ts"
import { defineTool, described, withDefault } from "../McpTool.ts"

const note = "A note kept with the decision (at most 4000 characters)."

export const dreamTools = Effect.gen(function*() {
  const dreams = yield* Dreams

  return [
    defineTool({
      name: "trigger_dream",
      title: "Trigger a dream run",
      description: "Queue a dream run over the bank's memories: a `dream` looks for patterns and makes predictions " +
        "and promotion proposals, a `trance` is a shorter pass. Returns at once with the operation_id (poll " +
        "get_operation; `deduplicated: true` when the same run was already waiting), then read it with list_dreams. " +
        "The run does its work only while the bank's config has dream.enabled; otherwise the operation completes " +
        "as skipped.",
      fields: {
        run_type: withDefault(DreamRunType, "dream", "dream (default) or trance."),
        trigger_source: withDefault(
          DreamTriggerSource,
          "manual",
          "What asked for the run: manual (default), event or cron."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { run_type, trigger_source }) => dreams.trigger(bankId, trigger_source, run_type)
    }),
    defineTool({
      name: "list_dreams",
      title: "List dream runs",
      description: "The bank's dream runs, newest first: each with its status, summary, narrative, predictions (with " +
        "their ids, for record_prediction_outcome), promotion proposals (ids for review_dream_proposal) and scores.",
      fields: {
        limit: withDefault(
          Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 200 })),
          20,
          "Newest runs to return (1-200)."
        )
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { limit }) => Effect.map(dreams.list(bankId, limit), (items) => ({ items }))
    }),
    defineTool({
      name: "get_dream_stats",
      title: "Dream statistics",
      description: "Statistics over the bank's dream runs: how many, the last one, average quality and novelty, " +
        "how often predictions were confirmed, the backlog of unresolved predictions and failed runs.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => dreams.stats(bankId)
    }),
    defineTool({
      name: "record_prediction_outcome",
      title: "Record a dream prediction's outcome",
      description: "Say what became of a dream's prediction (ids from list_dreams): confirmed, contradicted, or " +
        "request_more_evidence (it stays unresolved). Returns the prediction and the recorded outcome.",
      fields: {
        prediction_id: described(Schema.String, "The prediction's id (see list_dreams)."),
        status: described(PredictionOutcomeRequest.fields.status, "confirmed, contradicted or request_more_evidence."),
        note: described(PredictionOutcomeRequest.fields.note, note),
        evidence_ids: described(
          PredictionOutcomeRequest.fields.evidence_ids,
          "Memory ids that show the outcome (at most 200)."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { prediction_id, ...request }) => dreams.recordOutcome(bankId, prediction_id, request)
    }),
    defineTool({
      name: "review_dream_proposal",
      title: "Review a dream's promotion proposal",
      description: "Decide on a dream's promotion proposal (ids from list_dreams): approve turns a mental_model " +
        "proposal into a mental model and any other into a memory tagged `dream`; reject drops it; " +
        "request_more_evidence keeps it open. Approving an approved proposal is refused.",
      fields: {
        proposal_id: described(Schema.String, "The proposal's id (see list_dreams)."),
        action: described(ProposalReviewRequest.fields.action, "approve, reject or request_more_evidence."),
        note: described(ProposalReviewRequest.fields.note, note)
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { proposal_id, ...request }) => dreams.review(bankId, proposal_id, request)
    })
  ]
})
