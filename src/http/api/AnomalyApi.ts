/**
 * Anomaly routes: the bank's anomaly intelligence (a summary and the newest events with their corrections) and
 * the actions on one event — acknowledge, resolve, suppress — which the reference service does not have.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  AnomalyEventResponse,
  AnomalyIntelligenceRequest,
  AnomalyIntelligenceResponse,
  AnomalyNoteRequest
} from "../../domain/Anomaly.ts"
import { BankId } from "../../domain/Bank.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"

const bank = { bank_id: BankId }
const event = { bank_id: BankId, event_id: Schema.String }

const action = (name: "acknowledge" | "resolve" | "suppress", description: string) =>
  HttpApiEndpoint.post(name, `/v1/default/banks/:bank_id/anomaly/events/:event_id/${name}`, {
    params: event,
    // The body is optional: a bare POST acts without a note.
    payload: [AnomalyNoteRequest, Schema.Null],
    success: AnomalyEventResponse,
    error: [NotFound, ValidationError]
  }).annotate(OpenApi.Description, `${description} Body \`{note}\` is optional; answers the updated event.`)

export class AnomalyApi extends HttpApiGroup.make("anomaly")
  .add(
    HttpApiEndpoint.post("intelligence", "/v1/default/banks/:bank_id/anomaly/intelligence", {
      params: bank,
      payload: AnomalyIntelligenceRequest,
      success: AnomalyIntelligenceResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Anomalies detected when memories were retained: a summary over all of the bank's events, and the newest " +
        "events (filtered by status, types and minimum severity) with the corrections applied for them."
    ),
    action("acknowledge", "Mark an anomaly event as seen (status `acknowledged`)."),
    action("resolve", "Mark an anomaly event as resolved by the user (status `resolved`, `resolved_by: user`)."),
    action(
      "suppress",
      "Suppress an anomaly event (status `suppressed`): the same pair of statements is never reported again."
    )
  )
  .annotateMerge(
    OpenApi.annotations({ title: "Anomalies", description: "Contradictions and flaws found at write time" })
  )
{}
