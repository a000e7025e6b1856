/**
 * MCP tools for anomalies (contradictions and causal flaws found when memories were retained): list them with
 * their corrections, and act on one — acknowledge, resolve or suppress. They call `Anomalies`, as the REST
 * handlers do.
 */
import { Effect, Schema } from "effect"
import { type AnomalyAction, AnomalyIntelligenceRequest, AnomalyNoteRequest } from "../../domain/Anomaly.ts"
import { Anomalies } from "../../memory/anomaly/Anomalies.ts"
import { defineTool, described, type ToolHints } from "../McpTool.ts"

const request = AnomalyIntelligenceRequest.fields

export const anomalyTools = Effect.gen(function*() {
  const anomalies = yield* Anomalies

  const action = (name: AnomalyAction, title: string, description: string, hints: ToolHints) =>
    defineTool({
      name: `${name}_anomaly`,
      title,
      description,
      fields: {
        event_id: described(Schema.String, "The anomaly event's id (see list_anomalies)."),
        note: described(AnomalyNoteRequest.fields.note, "Why (at most 2000 characters).")
      },
      hints,
      run: (bankId, { event_id, note }) => anomalies.act(bankId, event_id, name, note ?? null)
    })

  return [
    defineTool({
      name: "list_anomalies",
      title: "List anomalies",
      description: "Anomalies found when memories were retained (a new fact contradicting an old one, a causal " +
        "flaw): a summary over all of the bank's events, and the newest events — each with its type, severity, " +
        "the memories involved, its status and the correction applied (e.g. the older fact superseded).",
      fields: {
        status: described(request.status, "Only events with this status: open, acknowledged, resolved or suppressed."),
        anomaly_types: described(request.anomaly_types, "Only events of these types."),
        min_severity: described(request.min_severity, "Only events at least this severe (0-1, default 0)."),
        limit: described(request.limit, "How many events to return, newest first (1-200, default 50).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, filter) => anomalies.intelligence(bankId, filter)
    }),
    action(
      "acknowledge",
      "Acknowledge an anomaly",
      "Mark an anomaly event as seen (status acknowledged); it stays listed. Returns the updated event.",
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true }
    ),
    action(
      "resolve",
      "Resolve an anomaly",
      "Mark an anomaly event as resolved by the user (status resolved, resolved_by user), e.g. after correcting " +
        "the memories involved. Returns the updated event.",
      { readOnlyHint: false, destructiveHint: false, idempotentHint: true }
    ),
    action(
      "suppress",
      "Suppress an anomaly",
      "Suppress an anomaly event (status suppressed): the same pair of statements is never reported again. " +
        "Returns the updated event.",
      { readOnlyHint: false, destructiveHint: true, idempotentHint: true }
    )
  ]
})
