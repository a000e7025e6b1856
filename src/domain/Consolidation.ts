/**
 * Consolidation as clients see it: the answer to a consolidation request, an observation's history with its
 * source facts resolved to text, the reset of one memory's observations and the tenant-wide trigger.
 */
import { Schema } from "effect"

const Nullable = Schema.NullOr(Schema.String)

export const ConsolidationResponse = Schema.Struct({
  operation_id: Schema.String,
  deduplicated: Schema.Boolean.annotate({ description: "true when a consolidation already waiting was reused" }),
  status: Schema.String
}).annotate({ identifier: "ConsolidationResponse" })

/** A fact as the history shows it; `text` is null when the fact has since been deleted. */
export const HistoryFact = Schema.Struct({
  id: Schema.String,
  text: Nullable,
  type: Nullable,
  occurred_start: Nullable,
  mentioned_at: Nullable
}).annotate({ identifier: "HistoryFact" })

export const ObservationHistoryEntry = Schema.Struct({
  version: Schema.Int,
  change: Schema.Literals(["created", "updated", "merged"]),
  text: Schema.String,
  previous_text: Nullable,
  source_fact_ids: Schema.Array(Schema.String),
  new_facts: Schema.Array(HistoryFact).annotate({ description: "the facts this change added, with their text" }),
  merged_observation_ids: Schema.Array(Schema.String).annotate({
    description: "near-duplicate observations folded into this one by this change"
  }),
  operation_id: Nullable,
  created_at: Schema.String
}).annotate({ identifier: "ObservationHistoryEntry" })

export const MemoryHistoryResponse = Schema.Struct({
  memory_id: Schema.String,
  bank_id: Schema.String,
  fact_type: Schema.String,
  text: Schema.String,
  source_facts: Schema.Array(HistoryFact).annotate({ description: "an observation's current source facts" }),
  observations: Schema.Array(Schema.Struct({ id: Schema.String, text: Schema.String })).annotate({
    description: "for a fact: the observations that rest on it"
  }),
  history: Schema.Array(ObservationHistoryEntry).annotate({ description: "an observation's changes, oldest first" })
}).annotate({ identifier: "MemoryHistoryResponse" })

export const ResetObservationsResponse = Schema.Struct({
  success: Schema.Boolean,
  message: Schema.String,
  deleted_count: Schema.Int,
  operation_id: Schema.String
}).annotate({ identifier: "ResetObservationsResponse" })

export const SchemaConsolidationResponse = Schema.Struct({
  schema: Schema.String,
  total_banks: Schema.Int,
  banks: Schema.Array(Schema.Struct({
    bank_id: Schema.String,
    operation_id: Schema.String,
    deduplicated: Schema.Boolean
  }))
}).annotate({ identifier: "SchemaConsolidationResponse" })

/** A PostgreSQL schema name as tenants use them: an unquoted identifier. */
export const TenantSchema = Schema.String.check(
  Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
    message: "must be a schema name: a letter or '_', then letters, digits or '_' (at most 63 characters)"
  })
)

export const RecoverConsolidationResponse = Schema.Struct({
  retried_count: Schema.Int.annotate({ description: "facts a failed consolidation left behind, queued again" })
}).annotate({ identifier: "RecoverConsolidationResponse" })
