/**
 * Dataset curation routes under `{bank}/forge/taste/`: the catalog, datasets, sets (import, list, read, edit,
 * revert), transform chains, variant generation, retain into the bank and export.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import {
  CatalogResponse,
  DatasetCreate,
  DatasetDeleted,
  DatasetListResponse,
  DatasetResponse,
  DatasetUpdate,
  ExportRequest,
  ExportResponse,
  GenerateRequest,
  GenerateResponse,
  RetainSetsRequest,
  RetainSetsResponse,
  SetImport,
  SetImportResponse,
  SetListResponse,
  SetResponse,
  SetStatus,
  SetUpdate,
  TransformRequest,
  TransformResponse
} from "../../domain/Dataset.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import { Offset } from "./MemoriesApi.ts"

const base = "/v1/default/banks/:bank_id/forge/taste"
const bank = { bank_id: BankId }
const dataset = { bank_id: BankId, dataset_id: Schema.String }
const set = { bank_id: BankId, set_id: Schema.String }
const errors = [NotFound, ValidationError]

export class DatasetsApi extends HttpApiGroup.make("datasets")
  .add(
    HttpApiEndpoint.get("catalog", `${base}/catalog`, { params: bank, success: CatalogResponse })
      .annotate(OpenApi.Description, "Schema types, transform ops and export adapters, with the limits that apply."),
    HttpApiEndpoint.get("listDatasets", `${base}/datasets`, {
      params: bank,
      success: DatasetListResponse,
      error: NotFound
    })
      .annotate(OpenApi.Description, "The bank's datasets, oldest first, with their set counts."),
    HttpApiEndpoint.post("createDataset", `${base}/datasets`, {
      params: bank,
      payload: DatasetCreate,
      success: DatasetResponse,
      error: errors
    })
      .annotate(
        OpenApi.Description,
        "Create a dataset (creates the bank if needed). `schema_type` is fixed from here on."
      ),
    HttpApiEndpoint.get("getDataset", `${base}/datasets/:dataset_id`, {
      params: dataset,
      success: DatasetResponse,
      error: NotFound
    }),
    HttpApiEndpoint.patch("updateDataset", `${base}/datasets/:dataset_id`, {
      params: dataset,
      payload: DatasetUpdate,
      success: DatasetResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Change name, description, taste_tags or taste_profile; a different schema_type is refused."
    ),
    HttpApiEndpoint.delete("deleteDataset", `${base}/datasets/:dataset_id`, {
      params: dataset,
      success: DatasetDeleted,
      error: NotFound
    })
      .annotate(
        OpenApi.Description,
        "Delete a dataset with all its sets (memories already retained stay in the bank)."
      ),
    HttpApiEndpoint.get("listSets", `${base}/datasets/:dataset_id/sets`, {
      params: dataset,
      query: {
        limit: Schema.optionalKey(
          Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 500 })).annotate({
            description: "1-500, default 100"
          })
        ),
        offset: Schema.optionalKey(Offset),
        status: Schema.optionalKey(SetStatus)
      },
      success: SetListResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "The dataset's sets ordered by set key, then variant index."),
    HttpApiEndpoint.post("importSets", `${base}/datasets/:dataset_id/sets`, {
      params: dataset,
      payload: SetImport,
      success: SetImportResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Import sets from `jsonl` or `sets` (exactly one), each validated against the schema type. Any invalid row " +
        "imports nothing and the 400 names every bad line (JSONL) or index. Keys are `{set_key_prefix or set}_NNNN`."
    ),
    HttpApiEndpoint.get("getSet", `${base}/sets/:set_id`, { params: set, success: SetResponse, error: NotFound }),
    HttpApiEndpoint.patch("updateSet", `${base}/sets/:set_id`, {
      params: set,
      payload: SetUpdate,
      success: SetResponse,
      error: errors
    })
      .annotate(
        OpenApi.Description,
        "Edit `working_payload` (validated, logged), `taste_tags` or `status` (draft ↔ ready, draft|ready|retained → " +
          "archived, archived → draft; `retained` only through retain)."
      ),
    HttpApiEndpoint.post("revertSet", `${base}/sets/:set_id/revert`, {
      params: set,
      success: SetResponse,
      error: NotFound
    })
      .annotate(OpenApi.Description, "Reset the working payload from the seed; the set returns to draft (logged)."),
    HttpApiEndpoint.post("transform", `${base}/transform`, {
      params: bank,
      payload: TransformRequest,
      success: TransformResponse,
      error: errors
    })
      .annotate(
        OpenApi.Description,
        "Preview or apply a chain of ops (`spellfix_llm`, `tone_shift`, `raw`) to the named sets or the whole dataset. " +
          "More than 3 sets run as a `taste_transform` operation. Ops needing a model answer 400 when none is configured."
      ),
    HttpApiEndpoint.post("generate", `${base}/datasets/:dataset_id/generate`, {
      params: dataset,
      payload: GenerateRequest,
      success: GenerateResponse,
      error: errors
    }).annotate(
      OpenApi.Description,
      "Generate paraphrased variants of seed sets with the language model (count 1-32, default 8). More than 12 " +
        "variants in all run as a `taste_variant` operation."
    ),
    HttpApiEndpoint.post("retainSets", `${base}/retain`, {
      params: bank,
      payload: RetainSetsRequest,
      success: RetainSetsResponse,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Retain sets of one dataset into the bank as memories tagged `taste:dataset:{id}` and `taste:set:{set_key}`; " +
        "sets already retained (or archived) are refused."
    ),
    HttpApiEndpoint.post("exportSets", `${base}/export`, {
      params: bank,
      payload: ExportRequest,
      success: ExportResponse,
      error: errors
    })
      .annotate(
        OpenApi.Description,
        "Materialise an export (`chat_messages_jsonl` or `atr_jsonl`); `content` holds the JSONL."
      )
  )
  .annotateMerge(OpenApi.annotations({ title: "Datasets", description: "Dataset curation (forge/taste)" }))
{}
