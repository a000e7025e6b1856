/** Document, entity and tag routes: the groupings retain builds around memories. */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BankId, DeleteResponse } from "../../domain/Bank.ts"
import { EntityIntelligenceResponse, EntityTrajectoryResponse, RecomputeResponse } from "../../domain/EntityState.ts"
import { NotFound } from "../../domain/Errors.ts"
import {
  DocumentDetail,
  DocumentListResponse,
  EntityDetailResponse,
  EntityListResponse,
  TagListResponse
} from "../../domain/Memory.ts"
import { Limit, Offset } from "./MemoriesApi.ts"

const bank = { bank_id: BankId }
const page = { limit: Schema.optionalKey(Limit), offset: Schema.optionalKey(Offset) }

/** The generic delete answer plus the two fields Hindsight clients read (`memory_units_deleted` = `deleted_count`). */
const DeleteDocumentResponse = Schema.Struct({
  ...DeleteResponse.fields,
  document_id: Schema.String,
  memory_units_deleted: Schema.Int
}).annotate({ identifier: "DeleteDocumentResponse" })

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/documents", {
      params: bank,
      query: { q: Schema.optionalKey(Schema.String), branch_name: Schema.optionalKey(Schema.String), ...page },
      success: DocumentListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/documents/:document_id", {
      params: { bank_id: BankId, document_id: Schema.String },
      success: DocumentDetail,
      error: NotFound
    }),
    HttpApiEndpoint.delete("delete", "/v1/default/banks/:bank_id/documents/:document_id", {
      params: { bank_id: BankId, document_id: Schema.String },
      success: DeleteDocumentResponse,
      error: NotFound
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Documents" }))
{}

export class EntitiesApi extends HttpApiGroup.make("entities")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/entities", {
      params: bank,
      query: page,
      success: EntityListResponse,
      error: NotFound
    }),
    HttpApiEndpoint.get("get", "/v1/default/banks/:bank_id/entities/:entity_id", {
      params: { bank_id: BankId, entity_id: Schema.String },
      success: EntityDetailResponse,
      error: NotFound
    }),
    HttpApiEndpoint.post("regenerate", "/v1/default/banks/:bank_id/entities/:entity_id/regenerate", {
      params: { bank_id: BankId, entity_id: Schema.String },
      success: EntityDetailResponse,
      error: NotFound
    }).annotate(OpenApi.Deprecated, true),
    HttpApiEndpoint.get("trajectory", "/v1/default/banks/:bank_id/entities/:entity_id/trajectory", {
      params: { bank_id: BankId, entity_id: Schema.String },
      success: EntityTrajectoryResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "The entity's latest computed trajectory; 404 until one was computed."),
    HttpApiEndpoint.post("recomputeTrajectory", "/v1/default/banks/:bank_id/entities/:entity_id/trajectory/recompute", {
      params: { bank_id: BankId, entity_id: Schema.String },
      success: RecomputeResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Queues a recompute of the entity's trajectory as a background operation."),
    HttpApiEndpoint.get("intelligence", "/v1/default/banks/:bank_id/entity-intelligence", {
      params: bank,
      success: EntityIntelligenceResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "The bank's latest entity intelligence document; 404 until one was computed."),
    HttpApiEndpoint.post("recomputeIntelligence", "/v1/default/banks/:bank_id/entity-intelligence/recompute", {
      params: bank,
      success: RecomputeResponse,
      error: NotFound
    }).annotate(OpenApi.Description, "Queues a recompute of the bank's entity intelligence as a background operation.")
  )
  .annotateMerge(OpenApi.annotations({ title: "Entities" }))
{}

export class TagsApi extends HttpApiGroup.make("tags")
  .add(
    HttpApiEndpoint.get("list", "/v1/default/banks/:bank_id/tags", {
      params: bank,
      query: { q: Schema.optionalKey(Schema.String.annotate({ description: "glob: * and ?" })), ...page },
      success: TagListResponse,
      error: NotFound
    })
  )
  .annotateMerge(OpenApi.annotations({ title: "Tags" }))
{}
