/**
 * File retain: each uploaded file is screened (size, and the zip-bomb checks for Office documents), stored
 * durably with a `file_retain` operation, then converted to markdown in the background (the parser chain of the
 * request, the file's metadata entry or the server default) and retained as one document carrying the file's
 * metadata and tags.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Banks } from "../../bank/Banks.ts"
import type { FileRetainRequest } from "../../domain/Files.ts"
import { ValidationError } from "../../domain/Errors.ts"
import { FileConverter } from "../../files/FileConverter.ts"
import { Operations } from "../../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../../bank/TaskRegistry.ts"
import { Retain } from "./Retain.ts"

export interface UploadedFile {
  readonly filename: string
  readonly contentType: string | undefined
  readonly bytes: Uint8Array
}

const Payload = Schema.Struct({
  upload_id: Schema.String,
  chain: Schema.Array(Schema.String),
  document_id: Schema.String,
  context: Schema.NullOr(Schema.String),
  timestamp: Schema.NullOr(Schema.String),
  metadata: Schema.Record(Schema.String, Schema.String),
  tags: Schema.Array(Schema.String)
})
const decodePayload = Schema.decodeUnknownEffect(Payload)

export class FileRetain extends Context.Service<FileRetain, {
  /** Validates every file and parser first (nothing is stored if one is refused), then queues one operation per file. */
  readonly submit: (
    bankId: string,
    files: ReadonlyArray<UploadedFile>,
    request: FileRetainRequest
  ) => Effect.Effect<ReadonlyArray<string>, ValidationError>
}>()("engram/memory/FileRetain") {
  static readonly layer = Layer.effect(
    FileRetain,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const converter = yield* FileConverter
      const operations = yield* Operations
      const banks = yield* Banks
      const retain = yield* Retain
      const registry = yield* TaskRegistry

      const submit = Effect.fn("FileRetain.submit")(function*(
        bankId: string,
        files: ReadonlyArray<UploadedFile>,
        request: FileRetainRequest
      ) {
        if (files.length === 0) return yield* ValidationError.single("files", "at least one file is required")
        const perFile = request.files_metadata ?? []
        const plans = []
        for (const [index, file] of files.entries()) {
          const meta = perFile[index] ?? {}
          const field = meta.parser !== undefined && meta.parser !== null
            ? `request.files_metadata.${index}.parser`
            : "request.parser"
          const chain = yield* converter.resolveChain(meta.parser ?? request.parser).pipe(
            Effect.mapError((error) => ValidationError.single(field, error.message))
          )
          if (file.bytes.length > converter.maxFileBytes) {
            return yield* ValidationError.single(
              `files.${index}`,
              `${file.filename} is ${file.bytes.length} bytes; the limit is ${converter.maxFileBytes}`
            )
          }
          // A zip bomb dressed as a document is refused here, with nothing stored, not later by a failed operation.
          yield* converter.screen(file).pipe(
            Effect.mapError((refused) => ValidationError.single(`files.${index}`, refused.message))
          )
          plans.push({ file, meta, chain })
        }
        yield* banks.ensure(bankId)
        const ids: Array<string> = []
        for (const { file, meta, chain } of plans) {
          const uploadId = crypto.randomUUID()
          const filename = meta.filename ?? file.filename
          const documentId = meta.document_id ?? filename
          yield* sql`INSERT INTO file_uploads ${
            sql.insert({
              id: uploadId,
              bankId,
              filename,
              contentType: file.contentType ?? null,
              sizeBytes: file.bytes.length,
              bytes: file.bytes
            })
          }`.pipe(Effect.orDie)
          const operation = yield* operations.submit({
            bankId,
            taskType: "file_retain",
            itemsCount: 1,
            documentId,
            payload: {
              upload_id: uploadId,
              chain,
              document_id: documentId,
              context: meta.context ?? request.context ?? null,
              timestamp: meta.timestamp ?? null,
              metadata: { filename, ...meta.metadata },
              tags: [...new Set([...(request.tags ?? []), ...(request.document_tags ?? []), ...(meta.tags ?? [])])]
            }
          })
          ids.push(operation.id)
        }
        return ids
      })

      yield* registry.register("file_retain", (operation) =>
        Effect.gen(function*() {
          const payload = yield* decodePayload(operation.payload).pipe(
            Effect.mapError(() =>
              new TaskFailure({ message: "the stored file retain payload is invalid", retryable: false })
            )
          )
          const rows = yield* sql<{ filename: string; contentType: string | null; bytes: Uint8Array }>`
            SELECT filename, content_type, bytes FROM file_uploads WHERE id = ${payload.upload_id}`.pipe(Effect.orDie)
          const upload = rows[0]
          if (upload === undefined) {
            return yield* new TaskFailure({ message: "the uploaded file is no longer stored", retryable: false })
          }
          const converted = yield* converter.convert(
            { filename: upload.filename, contentType: upload.contentType ?? undefined, bytes: upload.bytes },
            payload.chain
          ).pipe(Effect.mapError((error) => new TaskFailure({ message: error.message, retryable: false })))
          if (converted.markdown.trim() === "") {
            return yield* new TaskFailure({ message: `${upload.filename} contains no text`, retryable: false })
          }
          const outcome = yield* retain.retainForOperation(operation.bankId, [{
            content: converted.markdown,
            document_id: payload.document_id,
            context: payload.context,
            timestamp: payload.timestamp,
            metadata: { ...payload.metadata, parser: converted.parser, file_type: converted.detectedType },
            tags: payload.tags,
            update_mode: "replace"
          }], operation.id)
          yield* sql`DELETE FROM file_uploads WHERE id = ${payload.upload_id}`.pipe(Effect.orDie)
          return {
            document_id: payload.document_id,
            parser: converted.parser,
            file_type: converted.detectedType,
            markdown_chars: converted.markdown.length,
            memories_created: outcome.created,
            duplicates_skipped: outcome.duplicates
          }
        }))

      return FileRetain.of({ submit })
    })
  )
}
