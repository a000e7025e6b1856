/** REST handlers for document edits, chunks, reprocessing, transfer archives and stored file downloads. */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { readFile } from "node:fs/promises"
import { reachesBank } from "../../auth/BankAccess.ts"
import { DocumentEdits } from "../../documents/DocumentEdits.ts"
import { DocumentTransfer } from "../../documents/DocumentTransfer.ts"
import { Gone } from "../../domain/DocumentOps.ts"
import { NotFound } from "../../domain/Errors.ts"
import { StoredFiles } from "../../files/StoredFiles.ts"
import { EngramApi } from "../api/Api.ts"
import { paging } from "./Paging.ts"

/** A header value for the file name: plain ASCII, quotes and controls dropped (the name comes from a bank id). */
const attachment = (filename: string) => `attachment; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, "_")}"`

export const DocumentOpsHandlers = HttpApiBuilder.group(
  EngramApi,
  "documentOps",
  Effect.fn(function*(handlers) {
    const edits = yield* DocumentEdits
    const transfer = yield* DocumentTransfer
    const files = yield* StoredFiles
    return handlers.handleAll({
      update: ({ params, payload }) => edits.update(params.bank_id, params.document_id, payload),
      chunks: Effect.fn(function*({ params, query }) {
        const page = paging(query)
        const found = yield* edits.chunks(params.bank_id, params.document_id, page)
        return { items: found.items, total: found.total, ...page }
      }),
      reprocess: ({ params }) =>
        Effect.map(edits.reprocess(params.bank_id, params.document_id), ({ operationId }) => ({
          success: true,
          operation_id: operationId,
          items_count: 1
        })),
      exportDocuments: ({ params, query }) =>
        Effect.map(
          transfer.submitExport(params.bank_id, {
            documentIds: query.document_id === undefined
              ? undefined
              : typeof query.document_id === "string"
              ? [query.document_id]
              : query.document_id,
            includeObservations: query.include_observations ?? false
          }),
          ({ operationId, status }) => ({ operation_id: operationId, status })
        ),
      exportRemoved: () =>
        Effect.fail(
          new Gone({
            detail: "the synchronous document export was removed: POST document-transfer/export runs it in the " +
              "background and reports a download_url"
          })
        ),
      importDocuments: Effect.fn(function*({ params, query, payload }) {
        const bytes = yield* Effect.promise(() => readFile(payload.file.path))
        const submitted = yield* transfer.submitImport(
          params.bank_id,
          new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          query.on_conflict ?? "skip"
        )
        return { operation_id: submitted.operationId, status: submitted.status }
      }),
      // A file of a bank the key does not reach is answered as missing, like one that does not exist.
      download: Effect.fn(function*({ params }) {
        const file = yield* files.get(params.key)
        if (!(yield* reachesBank(file.bankId))) return yield* NotFound.of("file", params.key)
        return HttpServerResponse.uint8Array(file.bytes, {
          contentType: file.contentType,
          headers: { "content-disposition": attachment(file.filename) }
        })
      })
    })
  })
)
