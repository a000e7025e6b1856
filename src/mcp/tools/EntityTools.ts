/**
 * MCP tools for entity trajectories (how one entity's state moved over time) and entity intelligence (the bank's
 * entities summarised together): read the latest computed document, or queue a recompute, which answers with the
 * queued operation and never waits for it. They call `EntityTrajectories` and `EntityIntelligence`, as the REST
 * handlers do.
 */
import { Effect, Schema } from "effect"
import { EntityIntelligence } from "../../entities/intelligence/IntelligenceService.ts"
import { EntityTrajectories } from "../../entities/trajectory/TrajectoryService.ts"
import { defineTool, described } from "../McpTool.ts"

const entityId = {
  entity_id: described(Schema.String, "The entity's id (list_entities or a memory's entities show it).")
}

const queued = (recompute: { readonly operationId: string; readonly status: string }) => ({
  operation_id: recompute.operationId,
  status: recompute.status
})

export const entityTools = Effect.gen(function*() {
  const trajectories = yield* EntityTrajectories
  const intelligence = yield* EntityIntelligence

  return [
    defineTool({
      name: "get_entity_trajectory",
      title: "Read an entity's trajectory",
      description: "How one entity's state moved over time: the vocabulary of its states, the probabilities of " +
        "moving between them, the most likely path through its memories, its current state and a forecast of the " +
        "next. Not found until a trajectory was computed: recompute_entity_trajectory queues one.",
      fields: entityId,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { entity_id }) => trajectories.get(bankId, entity_id)
    }),
    defineTool({
      name: "recompute_entity_trajectory",
      title: "Recompute an entity's trajectory",
      description: "Queue a recompute of one entity's trajectory from its memories. Returns at once with the " +
        "operation_id (poll get_operation), then read it with get_entity_trajectory.",
      fields: entityId,
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { entity_id }) => Effect.map(trajectories.requestRecompute(bankId, entity_id), queued)
    }),
    defineTool({
      name: "get_entity_intelligence",
      title: "Read the bank's entity intelligence",
      description: "The bank's latest entity intelligence document: a markdown summary of the bank's entities " +
        "with its structured form and what changed since the previous one. Not found until one was computed: " +
        "recompute_entity_intelligence queues one.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => intelligence.get(bankId)
    }),
    defineTool({
      name: "recompute_entity_intelligence",
      title: "Recompute the bank's entity intelligence",
      description: "Queue a recompute of the bank's entity intelligence. Returns at once with the operation_id " +
        "(poll get_operation), then read it with get_entity_intelligence.",
      fields: {},
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId) => Effect.map(intelligence.requestRecompute(bankId), queued)
    })
  ]
})
