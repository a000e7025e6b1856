/**
 * Export adapters. Every set is first materialised as a training record (ATR: turns, task, labels, provenance,
 * quality, lineage); `atr_jsonl` writes those records, `chat_messages_jsonl` (alias `openai_chat_jsonl`) writes the
 * fine-tuning messages format — exactly the set's working messages, nothing appended (the reference service added
 * the set key as a user turn and repeated the answer). Pure functions over rows already read.
 */
import type { ExportAdapterId, SchemaType } from "../domain/Dataset.ts"
import type { DatasetRow, SetRow } from "./DatasetStore.ts"
import { type JsonObject, payloadHash, payloadProblems, type Turn, turnsOf } from "./Payloads.ts"

export const adapterVersion = "taste_studio_v1"

export interface TrainingRecord {
  readonly record_id: string
  readonly forge_job_id: string
  readonly recipe_id: "taste_studio"
  readonly domain_tags: ReadonlyArray<string>
  readonly timeline: { readonly sessions: ReadonlyArray<JsonObject> }
  readonly tasks: ReadonlyArray<JsonObject>
  readonly labels: { readonly answer: string | null; readonly gold_answer: string | null }
  readonly payload: JsonObject
  readonly source_payload: JsonObject
  readonly transform_log: SetRow["transformLog"]
  readonly provenance: JsonObject
  readonly quality: {
    readonly overall: number
    readonly provenance_complete: boolean
    readonly temporal_coherent: boolean
    readonly citation_valid: boolean
    readonly exportable: boolean
    readonly issues: ReadonlyArray<string>
  }
  readonly lineage: JsonObject
}

const lastAnswer = (schemaType: SchemaType, payload: JsonObject, turns: ReadonlyArray<Turn>) =>
  schemaType === "qa_pair"
    ? String(payload["answer"] ?? "")
    : [...turns].reverse().find((turn) => turn.role === "assistant")?.content ?? null

/** What keeps a record out of a fine-tuning file. */
const issuesOf = (schemaType: SchemaType, payload: JsonObject, turns: ReadonlyArray<Turn>): ReadonlyArray<string> => {
  const issues: Array<string> = []
  if (payloadProblems(schemaType, payload).length > 0) issues.push("invalid_payload")
  if (schemaType === "custom" && turns.length === 0) issues.push("not_chat_shaped")
  else if (turns.length === 0 || turns.every((turn) => turn.content.trim() === "")) issues.push("empty_content")
  else if (!turns.some((turn) => turn.role === "assistant")) issues.push("no_assistant_turn")
  return issues
}

export const materialize = (dataset: DatasetRow, set: SetRow, exportedAt: string): TrainingRecord => {
  const chatTurns = turnsOf(dataset.schemaType, set.workingPayload)
  // A custom payload that is not chat-shaped is still a record: one user turn holding its JSON.
  const turns = chatTurns.length > 0 || dataset.schemaType !== "custom"
    ? chatTurns
    : [{ role: "user", content: JSON.stringify(set.workingPayload) }]
  const issues = issuesOf(dataset.schemaType, set.workingPayload, chatTurns)
  return {
    record_id: `taste_${set.id}`,
    forge_job_id: `taste_dataset_${dataset.id}`,
    recipe_id: "taste_studio",
    domain_tags: set.tasteTags,
    timeline: {
      sessions: [{ session_id: set.setKey, event_date: set.updatedAt.toISOString(), tags: set.tasteTags, turns }]
    },
    tasks: [{
      task_type: "taste_curation",
      query: set.setKey,
      metadata: {
        dataset_id: dataset.id,
        set_id: set.id,
        parent_set_id: set.parentSetId,
        variant_index: set.variantIndex,
        schema_type: dataset.schemaType,
        status: set.status
      }
    }],
    labels: {
      answer: lastAnswer(dataset.schemaType, set.workingPayload, chatTurns),
      gold_answer: dataset.schemaType === "qa_pair" ? String(set.sourcePayload["answer"] ?? "") : null
    },
    payload: set.workingPayload,
    source_payload: set.sourcePayload,
    transform_log: set.transformLog,
    provenance: {
      ingest_adapter: "taste_studio",
      bank_id: dataset.bankId,
      dataset_id: dataset.id,
      set_id: set.id,
      memory_unit_ids: set.memoryUnitIds
    },
    quality: {
      overall: Math.max(0, 1 - 0.5 * issues.length),
      provenance_complete: true,
      temporal_coherent: true,
      citation_valid: true,
      exportable: issues.length === 0,
      issues
    },
    lineage: {
      recipe_id: "taste_studio",
      recipe_version: "1",
      adapter_version: adapterVersion,
      snapshot_hash: payloadHash(set.workingPayload),
      source_hash: payloadHash(set.sourcePayload),
      parent_set_id: set.parentSetId,
      variant_index: set.variantIndex,
      transforms: set.transformLog.length,
      exported_at: exportedAt
    }
  }
}

/** The fine-tuning line of a record: the working messages exactly as stored (extra keys such as `name` kept). */
const chatLine = (dataset: DatasetRow, set: SetRow): JsonObject => ({
  messages: dataset.schemaType === "qa_pair"
    ? turnsOf("qa_pair", set.workingPayload)
    : set.workingPayload["messages"]
})

export interface ExportOutcome {
  readonly lines: ReadonlyArray<string>
  readonly records: ReadonlyArray<TrainingRecord>
}

/**
 * The lines an adapter writes. Without a threshold, `atr_jsonl` writes every record (quality says what is wrong)
 * while the chat format writes only exportable ones; a threshold keeps records whose overall quality reaches it.
 */
export const exportLines = (
  adapter: ExportAdapterId,
  dataset: DatasetRow,
  sets: ReadonlyArray<SetRow>,
  exportedAt: string,
  threshold: number | null
): ExportOutcome => {
  const records = sets.map((set) => materialize(dataset, set, exportedAt))
  const lines: Array<string> = []
  records.forEach((record, index) => {
    const passes = threshold === null
      ? adapter === "atr_jsonl" || record.quality.exportable
      : record.quality.overall >= threshold
    if (!passes) return
    if (adapter === "atr_jsonl") lines.push(JSON.stringify(record))
    else if (record.quality.exportable) lines.push(JSON.stringify(chatLine(dataset, sets[index]!)))
  })
  return { lines, records }
}

export const qualitySummary = (records: ReadonlyArray<TrainingRecord>) => {
  const issueCounts: Record<string, number> = {}
  for (const record of records) {
    for (const issue of record.quality.issues) issueCounts[issue] = (issueCounts[issue] ?? 0) + 1
  }
  const exportable = records.filter((record) => record.quality.exportable).length
  return {
    total: records.length,
    exportable,
    held_back: records.length - exportable,
    pass_rate: records.length === 0 ? 0 : exportable / records.length,
    avg_score: records.length === 0
      ? 0
      : records.reduce((sum, record) => sum + record.quality.overall, 0) / records.length,
    issue_counts: issueCounts
  }
}
