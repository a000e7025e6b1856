/** The `request` part of a file retain: parser choice, per-file metadata, tags, as existing clients send it. */
import { Schema } from "effect"
import { DocumentId, ItemTimestamp } from "./Memory.ts"

export const ParserChoice = Schema.Union([Schema.String, Schema.Array(Schema.String)]).annotate({
  description: "A parser name or an ordered fallback chain"
})

export const FileMetadata = Schema.Struct({
  filename: Schema.optionalKey(Schema.NullOr(Schema.String)),
  document_id: Schema.optionalKey(Schema.NullOr(DocumentId)),
  context: Schema.optionalKey(Schema.NullOr(Schema.String)),
  metadata: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.String))),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  timestamp: Schema.optionalKey(Schema.NullOr(ItemTimestamp)),
  parser: Schema.optionalKey(Schema.NullOr(ParserChoice))
}).annotate({ identifier: "FileMetadata" })

export const FileRetainRequest = Schema.Struct({
  parser: Schema.optionalKey(Schema.NullOr(ParserChoice)),
  files_metadata: Schema.optionalKey(Schema.NullOr(Schema.Array(FileMetadata))),
  tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  document_tags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  context: Schema.optionalKey(Schema.NullOr(Schema.String)),
  async: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "FileRetainRequest" })
export type FileRetainRequest = typeof FileRetainRequest.Type

export const FileRetainResponse = Schema.Struct({
  operation_ids: Schema.Array(Schema.String),
  success: Schema.Boolean,
  bank_id: Schema.String,
  files_count: Schema.Int
}).annotate({ identifier: "FileRetainResponse" })
