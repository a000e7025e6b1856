/**
 * Requests and responses of the document operations beyond list/get/delete: editing a document's tags, its
 * chunks, reprocessing it, and moving documents between banks as transfer archives. Field names follow the
 * published Hindsight client.
 */
import { Schema } from "effect"

export const UpdateDocumentRequest = Schema.Struct({
  tags: Schema.optionalKey(Schema.NullOr(
    Schema.Array(Schema.String.check(
      Schema.isMinLength(1, { message: "a tag must not be empty" }),
      Schema.isMaxLength(256, { message: "a tag must be at most 256 characters" })
    )).annotate({ description: "New tags for the document and all its memories; their observations are rebuilt" })
  ))
}).annotate({ identifier: "UpdateDocumentRequest" })
export type UpdateDocumentRequest = typeof UpdateDocumentRequest.Type

export const UpdateDocumentResponse = Schema.Struct({
  success: Schema.Boolean
}).annotate({ identifier: "UpdateDocumentResponse" })

export const DocumentChunk = Schema.Struct({
  chunk_id: Schema.String,
  document_id: Schema.String,
  bank_id: Schema.String,
  chunk_index: Schema.Int,
  chunk_text: Schema.String,
  created_at: Schema.String
}).annotate({ identifier: "DocumentChunk" })

export const DocumentChunkList = Schema.Struct({
  items: Schema.Array(DocumentChunk),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotate({ identifier: "DocumentChunkList" })

export const ReprocessDocumentResponse = Schema.Struct({
  success: Schema.Boolean,
  operation_id: Schema.String,
  items_count: Schema.Int
}).annotate({ identifier: "ReprocessDocumentResponse" })

export const TransferSubmitResponse = Schema.Struct({
  operation_id: Schema.String,
  status: Schema.String
}).annotate({ identifier: "TransferSubmitResponse" })

/** What an import does with a document id the bank already holds. */
export const OnConflict = Schema.Literals(["skip", "replace", "new-id"])
export type OnConflict = typeof OnConflict.Type

/** A stored file's key: one path segment of letters, digits, '.', '_' and '-' (never a path). */
export const StoredFileKey = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/, {
    message: "must be a file key as returned by an export (letters, digits, '.', '_' or '-')"
  })
)

/** The `410` of a route the published client still names but that no longer exists. */
export class Gone extends Schema.TaggedError<Gone>()("Gone", { detail: Schema.String }, { httpApiStatus: 410 }) {}
