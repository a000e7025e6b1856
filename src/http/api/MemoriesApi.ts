/** Memory routes: retain, list, get, clear, delete one, and chunks. */
import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BankId, DeleteResponse } from "../../domain/Bank.ts"
import { NotFound, ServiceUnavailable, ValidationError } from "../../domain/Errors.ts"
import { FileRetainResponse } from "../../domain/Files.ts"
import { RecallRequest, RecallResponse } from "../../domain/Recall.ts"
import {
  ChunkResponse,
  FactType,
  MemoryDetail,
  MemoryListResponse,
  RetainRequest,
  RetainResponse
} from "../../domain/Memory.ts"

const bank = { bank_id: BankId }
export const Limit = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))
export const Offset = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export class MemoriesApi extends HttpApiGroup.make("memories")
  .add(
    HttpApiEndpoint.post("retain", "/v1/default/banks/:bank_id/memories", {
      params: bank,
      payload: RetainRequest,
      success: RetainResponse,
      error: ServiceUnavailable
    }).annotate(OpenApi.Description, "Retain memory items. `async: true` queues a batch_retain operation."),
    HttpApiEndpoint.post("retainFiles", "/v1/default/banks/:bank_id/files/retain", {
      params: bank,
      payload: Schema.Struct({
        files: Multipart.FilesSchema,
        request: Schema.optionalKey(Schema.String.annotate({ description: "FileRetainRequest as a JSON string" }))
      }).pipe(HttpApiSchema.asMultipart()),
      success: FileRetainResponse,
      error: ValidationError
    }).annotate(
      OpenApi.Description,
      "Upload files (PDF, DOCX, PPTX, XLSX, HTML, Markdown, text, images, audio); each becomes a document, converted " +
        "and retained in the background (one file_retain operation per file)."
    ),
    HttpApiEndpoint.post("recall", "/v1/default/banks/:bank_id/memories/recall", {
      params: bank,
      payload: RecallRequest,
      success: RecallResponse,
      error: [NotFound, ValidationError, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "Recall memories: semantic, keyword, graph (spreading activation) and temporal retrieval, fused and reranked."
    ),
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/memories/list", {
      params: bank,
      query: {
        type: Schema.optionalKey(FactType),
        q: Schema.optionalKey(Schema.String),
        branch_name: Schema.optionalKey(Schema.String),
        limit: Schema.optionalKey(Limit),
        offset: Schema.optionalKey(Offset)
      },
      success: MemoryListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/memories/:memory_id", {
      params: { bank_id: BankId, memory_id: Schema.String },
      query: { branch_name: Schema.optionalKey(Schema.String) },
      success: MemoryDetail,
      error: NotFound
    }),
    HttpApiEndpoint.delete("clear", "/v1/default/banks/:bank_id/memories", {
      params: bank,
      query: { type: Schema.optionalKey(FactType) },
      success: DeleteResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Delete the bank's memories (of one type, or all); the bank profile is kept."),
    HttpApiEndpoint.get("chunk", "/v1/default/chunks/:chunk_id", {
      params: { chunk_id: Schema.String },
      success: ChunkResponse,
      error: NotFound
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Memory", description: "Retain and read memories" }))
{}
