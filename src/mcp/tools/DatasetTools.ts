/**
 * MCP tools for dataset curation (forge/taste): the catalog, datasets, their sets (import, list, edit), transform
 * chains, generated variants, retain into the bank and export. They call `Datasets`, `TasteTransforms`,
 * `TasteRetain` and `TasteExport`, as the REST handlers do; a transform or generation too big to answer at once
 * comes back as the queued operation.
 */
import { Effect, Schema } from "effect"
import { Datasets } from "../../datasets/Datasets.ts"
import { TasteExport } from "../../datasets/TasteExport.ts"
import { TasteRetain } from "../../datasets/TasteRetain.ts"
import { TasteTransforms } from "../../datasets/TasteTransforms.ts"
import {
  DatasetCreate,
  DatasetUpdate,
  ExportRequest,
  GenerateRequest,
  RetainSetsRequest,
  SetImport,
  SetStatus,
  SetUpdate,
  TransformRequest
} from "../../domain/Dataset.ts"
import { Offset } from "../../http/api/MemoriesApi.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

const datasetId = { dataset_id: described(Schema.String, "The dataset's id (see list_datasets).") }
const tasteTags = "Tags describing the taste (style, audience) of the sets."

export const datasetTools = Effect.gen(function*() {
  const datasets = yield* Datasets
  const transforms = yield* TasteTransforms
  const retain = yield* TasteRetain
  const exporter = yield* TasteExport

  return [
    defineTool({
      name: "dataset_catalog",
      title: "Dataset catalog",
      description: "What dataset curation offers: the schema types a dataset can have (chat_messages, qa_pair, " +
        "custom) with their payload shapes, the transform ops, the export adapters, whether a language model is " +
        "available for the ops that need one, and the limits that apply.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      usesBank: false,
      run: () => exporter.catalog
    }),
    defineTool({
      name: "list_datasets",
      title: "List datasets",
      description: "The bank's datasets, oldest first, each with its schema type, taste tags and set counts by status.",
      fields: {},
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId) => datasets.list(bankId)
    }),
    defineTool({
      name: "create_dataset",
      title: "Create a dataset",
      description: "Create a dataset of training or evaluation sets in the bank (the bank is created if needed). " +
        "schema_type fixes the shape of every set: chat_messages ({messages:[{role, content}]}), qa_pair " +
        "({question, answer}) or custom (any object); it cannot change later.",
      fields: {
        name: described(DatasetCreate.fields.name, "A name for the dataset."),
        description: described(DatasetCreate.fields.description, "What the dataset is for."),
        schema_type: described(DatasetCreate.fields.schema_type, "chat_messages (default), qa_pair or custom."),
        taste_tags: described(DatasetCreate.fields.taste_tags, tasteTags)
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, request) => datasets.create(bankId, request)
    }),
    defineTool({
      name: "get_dataset",
      title: "Read a dataset",
      description: "One dataset: its name, description, schema type, taste tags and profile, and set counts.",
      fields: datasetId,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { dataset_id }) => datasets.get(bankId, dataset_id)
    }),
    defineTool({
      name: "update_dataset",
      title: "Update a dataset",
      description: "Change a dataset's name, description, taste tags or taste profile; only the given fields " +
        "change. The schema type cannot change.",
      fields: {
        ...datasetId,
        name: described(DatasetUpdate.fields.name, "New name."),
        description: described(DatasetUpdate.fields.description, "New description."),
        taste_tags: described(DatasetUpdate.fields.taste_tags, tasteTags),
        taste_profile: described(DatasetUpdate.fields.taste_profile, "Free-form JSON object describing the taste.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { dataset_id, ...request }) => datasets.update(bankId, dataset_id, request)
    }),
    defineTool({
      name: "delete_dataset",
      title: "Delete a dataset",
      description: "Delete a dataset with all its sets. Memories already retained from it stay in the bank.",
      fields: datasetId,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { dataset_id }) => datasets.remove(bankId, dataset_id)
    }),
    defineTool({
      name: "list_dataset_sets",
      title: "List a dataset's sets",
      description: "The sets of a dataset ordered by set key: each with its seed and working payload, status " +
        "(draft, ready, retained, archived), taste tags and quality.",
      fields: {
        ...datasetId,
        status: optional(SetStatus, "Only sets with this status."),
        limit: withDefault(
          Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 500 })),
          100,
          "How many sets to return (1-500)."
        ),
        offset: withDefault(Offset, 0, "How many sets to skip (paging).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { dataset_id, ...filter }) => datasets.listSets(bankId, dataset_id, filter)
    }),
    defineTool({
      name: "import_dataset_sets",
      title: "Import sets into a dataset",
      description: "Add sets to a dataset from `sets` (payload objects) or `jsonl` (one JSON object per line) — " +
        "exactly one of them. Each is checked against the dataset's schema type; one bad row imports nothing and " +
        "the error names every bad line or index.",
      fields: {
        ...datasetId,
        sets: described(
          SetImport.fields.sets,
          "The payloads, e.g. [{\"question\": \"…\", \"answer\": \"…\"}] for qa_pair."
        ),
        jsonl: described(SetImport.fields.jsonl, "The payloads as JSON Lines (instead of sets)."),
        set_key_prefix: described(
          SetImport.fields.set_key_prefix,
          "Prefix of the set keys ({prefix}_0001, …); default 'set'."
        ),
        taste_tags: described(SetImport.fields.taste_tags, tasteTags)
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { dataset_id, ...request }) => datasets.importSets(bankId, dataset_id, request)
    }),
    defineTool({
      name: "update_dataset_set",
      title: "Edit a dataset set",
      description: "Edit one set (ids from list_dataset_sets): its working payload (checked against the schema " +
        "type), taste tags, or status (draft ↔ ready, to archived, archived → draft; `retained` only through " +
        "retain_dataset_sets).",
      fields: {
        set_id: described(Schema.String, "The set's id (see list_dataset_sets)."),
        working_payload: described(
          SetUpdate.fields.working_payload,
          "The edited payload, in the dataset's schema type."
        ),
        taste_tags: described(SetUpdate.fields.taste_tags, tasteTags),
        status: described(SetUpdate.fields.status, "draft, ready or archived.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
      run: (bankId, { set_id, ...request }) => datasets.updateSet(bankId, set_id, request)
    }),
    defineTool({
      name: "transform_dataset_sets",
      title: "Transform dataset sets",
      description: "Run a chain of ops over the named sets or the whole dataset: spellfix_llm and tone_shift (need " +
        "a language model) and raw (the payload unchanged, still logged). preview=true shows before and after without " +
        "saving. More than 3 sets run in the background: the result then has the operation_id (poll get_operation).",
      fields: {
        dataset_id: described(TransformRequest.fields.dataset_id, "The dataset's id (see list_datasets)."),
        set_ids: described(TransformRequest.fields.set_ids, "The sets to transform; default every set of the dataset."),
        ops: described(
          TransformRequest.fields.ops,
          "The ops in order (1-10), e.g. [{\"op\": \"tone_shift\", \"params\": {\"tone\": \"formal\"}}]."
        ),
        preview: described(TransformRequest.fields.preview, "Show the result without saving it (default false).")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, request) => transforms.transform(bankId, request)
    }),
    defineTool({
      name: "generate_dataset_variants",
      title: "Generate set variants",
      description: "Generate paraphrased variants of seed sets with the language model (count per seed, 1-32, " +
        "default 8), added to the dataset as drafts. More than 12 variants in all run in the background: the " +
        "result then has the operation_id (poll get_operation).",
      fields: {
        ...datasetId,
        set_ids: described(GenerateRequest.fields.set_ids, "The seed sets (at least one)."),
        count: described(GenerateRequest.fields.count, "Variants per seed (1-32, default 8)."),
        options: described(GenerateRequest.fields.options, "{instruction}: how the variants should differ.")
      },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      run: (bankId, { dataset_id, ...request }) => transforms.generate(bankId, dataset_id, request)
    }),
    defineTool({
      name: "retain_dataset_sets",
      title: "Retain sets as memories",
      description: "Store sets of one dataset in the bank as memories tagged taste:dataset:{id} and " +
        "taste:set:{set_key}; they become `retained`. Sets already retained or archived are refused.",
      fields: { set_ids: described(RetainSetsRequest.fields.set_ids, "The sets to retain (see list_dataset_sets).") },
      hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
      run: (bankId, { set_ids }) => retain.retain(bankId, set_ids)
    }),
    defineTool({
      name: "export_dataset",
      title: "Export a dataset",
      description: "Materialise a dataset (or the named sets) as JSONL for training: chat_messages_jsonl (default; " +
        "openai_chat_jsonl is the same) or atr_jsonl. `content` holds the JSONL, with a quality summary.",
      fields: {
        dataset_id: described(ExportRequest.fields.dataset_id, "The dataset's id (see list_datasets)."),
        adapter_id: described(
          ExportRequest.fields.adapter_id,
          "chat_messages_jsonl (default), openai_chat_jsonl or atr_jsonl."
        ),
        set_ids: described(
          ExportRequest.fields.set_ids,
          "Only these sets; default the whole dataset without archived sets."
        ),
        options: described(ExportRequest.fields.options, "{quality_threshold (0-1), include_archived}.")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, request) => exporter.export(bankId, request)
    })
  ]
})
