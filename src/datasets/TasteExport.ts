/**
 * POST export and GET catalog. Export reads the sets (the whole dataset without archived sets, or exactly the
 * ones named) and answers the adapter's JSONL in `content` with a manifest: counts, lineage and a quality summary.
 * Nothing is written: an export can be repeated at will.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import type { CatalogResponse, ExportRequest, ExportResponse } from "../domain/Dataset.ts"
import type { NotFound, ValidationError } from "../domain/Errors.ts"
import { expiredAmong } from "../memory/forgetting/Expiry.ts"
import { Llm } from "../models/Llm.ts"
import { Datasets } from "./Datasets.ts"
import { adapterVersion, exportLines, qualitySummary } from "./Exporters.ts"
import { maxImportRows } from "./ImportRows.ts"
import { chatRoles, maxPayloadChars } from "./Payloads.ts"
import { maxRetainSets } from "./TasteRetain.ts"
import { defaultVariantCount, syncGenerateLimit, syncTransformLimit } from "./TasteTransforms.ts"
import { tastePurpose } from "./TransformOps.ts"

const catalogBody = (llmAvailable: boolean): CatalogResponse => ({
  schema_types: [
    {
      id: "chat_messages",
      title: "Chat messages",
      description: `{messages: [{role, content}, ...]}, non-empty; role one of ${chatRoles.join(", ")}`,
      aliases: ["openai_chat"]
    },
    { id: "qa_pair", title: "Q&A pair", description: "{question, answer}, both non-empty strings", aliases: [] },
    { id: "custom", title: "Custom JSON", description: "any non-empty JSON object", aliases: [] }
  ],
  transform_ops: [
    {
      op_id: "spellfix_llm",
      title: "Spellfix",
      description: "fix spelling, grammar and punctuation; keep wording, structure and labels",
      params: {},
      requires_llm: true
    },
    {
      op_id: "tone_shift",
      title: "Tone shift",
      description: "rewrite the texts in another tone, keeping facts and labels",
      params: { tone: ["concise", "formal", "friendly"] },
      requires_llm: true
    },
    {
      op_id: "raw",
      title: "Raw",
      description: "passthrough: the payload unchanged (still logged)",
      params: {},
      requires_llm: false
    }
  ],
  exporters: [
    {
      adapter_id: "chat_messages_jsonl",
      title: "Chat messages JSONL",
      description: "fine-tuning format: one {messages} line per exportable set, exactly its working messages",
      aliases: ["openai_chat_jsonl"]
    },
    {
      adapter_id: "atr_jsonl",
      title: "Training records JSONL",
      description: "one full training record per set: turns, task, labels, provenance, quality, lineage",
      aliases: []
    }
  ],
  llm_available: llmAvailable,
  limits: {
    import_rows: maxImportRows,
    payload_chars: maxPayloadChars,
    sync_transform_sets: syncTransformLimit,
    sync_generate_variants: syncGenerateLimit,
    default_variant_count: defaultVariantCount,
    max_variant_count: 32,
    retain_sets: maxRetainSets
  }
})

export class TasteExport extends Context.Service<TasteExport, {
  readonly catalog: Effect.Effect<CatalogResponse>
  readonly export: (bankId: string, request: ExportRequest) => Effect.Effect<ExportResponse, NotFound | ValidationError>
}>()("engram/datasets/TasteExport") {
  static readonly layer = Layer.effect(
    TasteExport,
    Effect.gen(function*() {
      const datasets = yield* Datasets
      const llm = yield* Llm
      const sql = yield* SqlClient.SqlClient

      const exportSets = Effect.fn("TasteExport.export")(function*(bankId: string, request: ExportRequest) {
        const dataset = yield* datasets.resolveDataset(bankId, request.dataset_id)
        const named = request.set_ids !== undefined && request.set_ids !== null && request.set_ids.length > 0
        const includeArchived = named || (request.options?.include_archived ?? false)
        const resolved = (yield* datasets.resolveSets(bankId, dataset, request.set_ids))
          .filter((set) => includeArchived || set.status !== "archived")
        // A set retained into the bank goes with its memory; one whose memory has expired is not exported, as the
        // expiry sweep would delete it (`forgetting/Expiry.ts`).
        const expired = yield* expiredAmong(sql, resolved.flatMap((set) => set.memoryUnitIds), new Date()).pipe(
          Effect.orDie
        )
        const sets = resolved.filter((set) => !set.memoryUnitIds.some((id) => expired.has(id)))
        const adapter = request.adapter_id ?? "chat_messages_jsonl"
        const exportedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
        const { lines, records } = exportLines(
          adapter,
          dataset,
          sets,
          exportedAt,
          request.options?.quality_threshold ?? null
        )
        const content = lines.length === 0 ? "" : `${lines.join("\n")}\n`
        return {
          adapter_id: adapter,
          record_count: records.length,
          exportable_count: lines.length,
          output_path: null,
          content,
          lineage: {
            dataset_id: dataset.id,
            dataset_name: dataset.name,
            schema_type: dataset.schemaType,
            adapter_id: adapter === "openai_chat_jsonl" ? "chat_messages_jsonl" : adapter,
            adapter_version: adapterVersion,
            exported_at: exportedAt,
            set_count: sets.length,
            seed_count: sets.filter((set) => set.variantIndex === 0).length,
            variant_count: sets.filter((set) => set.variantIndex > 0).length,
            content_sha256: createHash("sha256").update(content).digest("hex")
          },
          quality_summary: qualitySummary(records)
        }
      })

      return TasteExport.of({
        catalog: Effect.sync(() => catalogBody(llm.available(tastePurpose))),
        export: exportSets
      })
    })
  )
}
