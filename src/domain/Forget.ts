/**
 * The forget request and its report: which memories to forget (an entity, memory ids, a document, a tag; any
 * together, the union is forgotten) and, per kind of derived state, how much went. The report holds counts and ids,
 * never forgotten content.
 */
import { Schema } from "effect"
import { DocumentId } from "./Memory.ts"

export const ForgetRequest = Schema.Struct({
  entity: Schema.optionalKey(
    Schema.NullOr(Schema.String.check(
      Schema.isMinLength(2, { message: "an entity name must have at least 2 characters" }),
      Schema.isMaxLength(256, { message: "an entity name must be at most 256 characters" })
    )).annotate({
      description: "Every memory naming the entity (linked to it, or its name in the text), and the entity"
    })
  ),
  memory_ids: Schema.optionalKey(Schema.NullOr(
    Schema.Array(Schema.String.check(Schema.isMinLength(1))).check(
      Schema.isMaxLength(10_000, { message: "at most 10000 memory ids per request" })
    )
  )),
  document_id: Schema.optionalKey(Schema.NullOr(DocumentId)),
  tag: Schema.optionalKey(
    Schema.NullOr(Schema.String.check(Schema.isMinLength(1, { message: "tag must not be empty" })))
  ),
  dry_run: Schema.optionalKey(Schema.Boolean.annotate({ description: "Report what would go; change nothing" })),
  purge_history: Schema.optionalKey(Schema.Boolean.annotate({
    description: "Rewrite the memory repo commits that hold the content (the one history-rewriting operation)"
  }))
}).annotate({ identifier: "ForgetRequest" })
export type ForgetRequest = typeof ForgetRequest.Type

const Count = Schema.Int

export const ForgetRemoved = Schema.Struct({
  memories: Count,
  invalidated_memories: Count.annotate({ description: "archived (invalidated) memories about it" }),
  observations: Count.annotate({
    description: "observations built on forgotten facts (their other facts are reconsolidated)"
  }),
  entities: Count,
  trajectories: Count,
  entity_intelligence: Count.annotate({ description: "bank entity maps dropped (recomputed on the next request)" }),
  mental_models_marked_stale: Count.annotate({ description: "emptied and queued for refresh" }),
  dream_runs: Count,
  dream_predictions: Count,
  dream_proposals: Count,
  anomalies: Count,
  access_events: Count,
  chunks: Count,
  documents: Count,
  dataset_sets: Count
}).annotate({ identifier: "ForgetRemoved" })
export type ForgetRemoved = typeof ForgetRemoved.Type

export const ForgetReport = Schema.Struct({
  bank_id: Schema.String,
  dry_run: Schema.Boolean,
  memory_ids: Schema.Array(Schema.String),
  removed: ForgetRemoved,
  brain: Schema.Struct({
    updated: Schema.Boolean,
    file_rewritten: Schema.Boolean.annotate({ description: "the bank's kept .brain file was written again without it" })
  }),
  repo_commits: Schema.Struct({
    commit_ids: Schema.Array(Schema.String).annotate({
      description:
        "commits of the bank's memory repo made since the earliest forgotten memory was stored: they may hold it; with purge_history, exactly the commits that held it"
    }),
    rewritten: Schema.Boolean,
    note: Schema.String,
    rewrites: Schema.optionalKey(
      Schema.Array(Schema.Struct({ old_commit_id: Schema.String, new_commit_id: Schema.String })).annotate({
        description: "with purge_history: each rewritten commit's old and new id (a dry run lists what it would write)"
      })
    ),
    objects_deleted: Schema.optionalKey(
      Schema.Int.annotate({ description: "stored repo objects that held it, deleted" })
    ),
    read_copies_dropped: Schema.optionalKey(
      Schema.Int.annotate({ description: "parked branches' read copies dropped (re-copied on the next read)" })
    )
  })
}).annotate({ identifier: "ForgetReport" })
export type ForgetReport = typeof ForgetReport.Type
