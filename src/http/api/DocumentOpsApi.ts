/**
 * Document routes of the 0.9 client beyond list/get/delete: edit a document's tags, list its chunks, reprocess
 * it, export and import documents as transfer archives, and download a stored file (an export archive) by key.
 */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId } from "../../domain/Bank.ts"
import {
  DocumentChunkList,
  Gone,
  OnConflict,
  ReprocessDocumentResponse,
  StoredFileKey,
  TransferSubmitResponse,
  UpdateDocumentRequest,
  UpdateDocumentResponse
} from "../../domain/DocumentOps.ts"
import { NotFound, ValidationError } from "../../domain/Errors.ts"
import { TagsQuery } from "./GraphApi.ts"
import { Limit, Offset } from "./MemoriesApi.ts"

const document = { bank_id: BankId, document_id: Schema.String }
const bank = { bank_id: BankId }

export class DocumentOpsApi extends HttpApiGroup.make("documentOps")
  .add(
    HttpApiEndpoint.patch("update", "/v1/default/banks/:bank_id/documents/:document_id", {
      params: document,
      payload: UpdateDocumentRequest,
      success: UpdateDocumentResponse,
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Change a document's tags without reprocessing it. The tags go to every memory of the document; the " +
        "observations built on them are dropped and consolidated again under the new tags."
    ),
    HttpApiEndpoint.get("chunks", "/v1/default/banks/:bank_id/documents/:document_id/chunks", {
      params: document,
      query: { limit: Schema.optionalKey(Limit), offset: Schema.optionalKey(Offset) },
      success: DocumentChunkList,
      error: NotFound
    }).annotate(OpenApi.Description, "The document's chunks, in order."),
    HttpApiEndpoint.post("reprocess", "/v1/default/banks/:bank_id/documents/:document_id/reprocess", {
      params: document,
      success: ReprocessDocumentResponse,
      error: NotFound
    }).annotate(
      OpenApi.Description,
      "Extract the document's stored text again from scratch with the bank's current settings, replacing its " +
        "memories (a `document_reprocess` background operation; curation of its memories is reset)."
    ),
    HttpApiEndpoint.post("exportDocuments", "/v1/default/banks/:bank_id/document-transfer/export", {
      params: bank,
      query: {
        document_id: Schema.optionalKey(TagsQuery.annotate({ description: "document ids to export; omit for all" })),
        include_observations: Schema.optionalKey(Schema.Boolean.annotate({ description: "whole-bank exports only" }))
      },
      success: TransferSubmitResponse.pipe(HttpApiSchema.status(202)),
      error: [NotFound, ValidationError]
    }).annotate(
      OpenApi.Description,
      "Export documents (text, chunks, facts with entity names, causal links; no embeddings) as a transfer zip, " +
        "in a `document_export` background operation whose result carries `download_url` and `storage_key`."
    ),
    HttpApiEndpoint.get("exportRemoved", "/v1/default/banks/:bank_id/document-transfer", {
      params: bank,
      success: Schema.Struct({}),
      error: Gone
    }).annotate(OpenApi.Deprecated, true).annotate(
      OpenApi.Description,
      "Removed: always 410. Use POST document-transfer/export, which runs in the background."
    ),
    HttpApiEndpoint.post("importDocuments", "/v1/default/banks/:bank_id/document-transfer", {
      params: bank,
      query: { on_conflict: Schema.optionalKey(OnConflict) },
      payload: Schema.Struct({ file: Multipart.SingleFileSchema }).pipe(HttpApiSchema.asMultipart()),
      success: TransferSubmitResponse.pipe(HttpApiSchema.status(202)),
      error: ValidationError
    }).annotate(
      OpenApi.Description,
      "Import a transfer zip (from an export): checked at once, then written by a `document_import` background " +
        "operation — facts re-embedded, entities resolved anew, no language model. `on_conflict` for document ids " +
        "the bank holds: skip (default), replace or new-id."
    ),
    HttpApiEndpoint.get("download", "/v1/default/files/download/:key", {
      params: { key: StoredFileKey },
      success: Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array()),
      error: [NotFound, ValidationError]
    }).annotate(OpenApi.Description, "A stored file (an export archive) by the key its operation reported.")
  )
  .annotateMerge(OpenApi.annotations({ title: "Document operations" }))
{}
