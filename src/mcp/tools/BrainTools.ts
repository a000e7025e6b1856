/**
 * MCP tools for the bank's brain: its status, the sub-routine that builds it and its activity model (queued, never
 * awaited), the activity histogram and predictions, influence analytics, and learning from another engram instance
 * (queued; the remote address passes the same private-network guard as REST, and the remote key never appears in a
 * result or a log). They call `BrainRuntime`, `SubRoutine`, `BrainInfluence` and `BrainLearn`, as the REST handlers
 * do, and like them answer not found naming SERVICE_API_BRAIN_ENABLED when the brain runtime is off. Export and
 * import of `.brain` files stay REST-only: they move binary files.
 */
import { Effect } from "effect"
import { SubRoutine } from "../../activity/SubRoutine.ts"
import { BrainRuntime } from "../../brain/BrainRuntime.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import { BrainLearnRequest } from "../../domain/Brain.ts"
import { InfluenceQuery } from "../../domain/BrainInfluence.ts"
import { NotFound } from "../../domain/Errors.ts"
import { HorizonHours, SubRoutineRequest } from "../../domain/SubRoutine.ts"
import { BrainInfluence } from "../../influence/BrainInfluence.ts"
import { BrainLearn } from "../../learn/BrainLearn.ts"
import { defineTool, described, withDefault } from "../McpTool.ts"

const learn = BrainLearnRequest.fields

export const brainTools = Effect.gen(function*() {
  const config = yield* EngramConfig
  const runtime = yield* BrainRuntime
  const subRoutine = yield* SubRoutine
  const influence = yield* BrainInfluence
  const learning = yield* BrainLearn

  /** The same refusal as the REST routes' when the brain runtime is turned off. */
  const gate = <A, E>(tool: string, effect: Effect.Effect<A, E>) =>
    config.brain.enabled ? effect : Effect.fail(
      new NotFound({
        detail: `the brain tool ${tool} is disabled (SERVICE_API_BRAIN_ENABLED=false)`,
        resource: "tool",
        id: tool
      })
    )

  return [
    defineTool({
      name: "brain_status",
      title: "Brain status",
      description: "The bank's brain (the in-memory graph and keyword index recall reads): its circuit breaker, its " +
        ".brain file (whether it exists, size, data version, whether it still matches the bank) and metrics " +
        "(builds, incremental updates, compactions, last build time, hit rate).",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => gate("brain_status", runtime.status(bankId))
    }),
    defineTool({
      name: "run_sub_routine",
      title: "Run the brain's sub-routine",
      description: "Queue the sub-routine: build the bank's brain and bring its activity model up to date, then " +
        "predict the next horizon_hours of activity. Returns at once with the operation_id (poll get_operation; " +
        "`deduplicated: true` when the same request was already waiting). force_rebuild drops the brain and " +
        "recounts the model from the tables.",
      fields: {
        mode: withDefault(SubRoutineRequest.fields.mode, "incremental", "warmup, incremental (default) or full_copy."),
        horizon_hours: withDefault(SubRoutineRequest.fields.horizon_hours, 24, "Hours ahead to predict (1-168)."),
        force_rebuild: withDefault(
          SubRoutineRequest.fields.force_rebuild,
          false,
          "Rebuild from the tables instead of folding in what is new."
        )
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { mode, horizon_hours, force_rebuild }) =>
        gate(
          "run_sub_routine",
          Effect.map(
            subRoutine.request(bankId, { mode, horizonHours: horizon_hours, forceRebuild: force_rebuild }),
            (queued) => ({
              operation_id: queued.operationId,
              deduplicated: queued.deduplicated,
              status: queued.status
            })
          )
        )
    }),
    defineTool({
      name: "get_activity_histogram",
      title: "Activity by hour",
      description: "The bank's activity by UTC hour: 24 buckets whose shares sum to 1, from its reads and the times " +
        "of its facts.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => gate("get_activity_histogram", subRoutine.histogram(bankId))
    }),
    defineTool({
      name: "predict_activity",
      title: "Predict activity",
      description: "The hours of the next horizon_hours, each with its share of the activity expected then, " +
        "highest first: when the bank is likely to be used.",
      fields: { horizon_hours: withDefault(HorizonHours, 24, "Hours ahead (1-168).") },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { horizon_hours }) => gate("predict_activity", subRoutine.predictions(bankId, horizon_hours))
    }),
    defineTool({
      name: "get_brain_influence",
      title: "What shapes the bank's answers",
      description: "An influence leaderboard over the last window_days: each memory, chunk or mental model scored " +
        "from recency, frequency, PageRank, rerank scores and dream runs, with each factor's contribution; a " +
        "weekday/hour heatmap of reads, a daily trend and its anomalies.",
      fields: {
        window_days: withDefault(InfluenceQuery.window_days, 14, "Days of access telemetry read (1-90)."),
        top_k: withDefault(InfluenceQuery.top_k, 10, "Leaderboard rows (1-100)."),
        entity_type: withDefault(InfluenceQuery.entity_type, "all", "all (default), memory, chunk or mental_model.")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { window_days, top_k, entity_type }) =>
        gate(
          "get_brain_influence",
          influence.analytics(bankId, { windowDays: window_days, topK: top_k, entityType: entity_type })
        )
    }),
    defineTool({
      name: "learn_from_remote",
      title: "Learn from another engram",
      description: "Queue learning from another engram instance's bank: its .brain export when it offers one, else " +
        "its memories, mental models and entities. Remote memories are stored re-embedded, tagged brain-learn and " +
        "source:<remote bank>, deduplicated. Returns at once with the operation_id (poll get_operation; " +
        "`deduplicated: true` when the same learn was already waiting). Private and loopback addresses are refused " +
        "unless the server allows them.",
      fields: {
        remote_endpoint: described(
          learn.remote_endpoint,
          "The remote engram's base URL, e.g. https://memory.example.com."
        ),
        remote_bank_id: described(learn.remote_bank_id, "The bank to learn from on the remote."),
        remote_api_key: described(
          learn.remote_api_key,
          "The remote's API key, if it needs one (sent only to the remote, never stored)."
        ),
        learning_type: described(
          learn.learning_type,
          "auto (default), distilled, structured or raw_mirror (memories only)."
        ),
        mode: described(learn.mode, "incremental (default) or full_copy."),
        horizon_hours: described(learn.horizon_hours, "Hours of the remote's activity to learn (1-8760, default 24).")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: (bankId, request) => gate("learn_from_remote", learning.submit(bankId, request))
    })
  ]
})
