/**
 * MCP tools for documents (the sources memories were extracted from), their chunks, tags and background
 * operations. They call `Documents`, `DocumentEdits`, `Tags` and `Operations`, as the REST handlers do.
 */
import { Effect, Schema } from "effect"
import { Banks } from "../../bank/Banks.ts"
import { OperationStatus } from "../../domain/Operation.ts"
import { Limit, Offset } from "../../http/api/MemoriesApi.ts"
import { DocumentEdits } from "../../documents/DocumentEdits.ts"
import { Documents } from "../../memory/Documents.ts"
import { Tags } from "../../memory/Tags.ts"
import { Operations, toListEntry } from "../../bank/Operations.ts"
import { defineTool, described, optional, withDefault } from "../McpTool.ts"

const documentId = { document_id: described(Schema.String, "The document's id (see list_documents).") }
const operationId = {
  operation_id: described(Schema.String, "The operation's id, as returned by the tool that queued it.")
}

export const documentTools = Effect.gen(function*() {
  const documents = yield* Documents
  const edits = yield* DocumentEdits
  const tags = yield* Tags
  const operations = yield* Operations
  const banks = yield* Banks

  return [
    defineTool({
      name: "list_documents",
      title: "List documents",
      description: "List the documents memories were retained from (by `document_id` or file upload), most recently " +
        "updated first, with how many memories each produced.",
      fields: {
        q: optional(Schema.String, "Only documents whose id contains this (case-insensitive)."),
        limit: withDefault(Limit, 100, "How many documents to return (1-1000).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { q, limit }) =>
        Effect.map(documents.list(bankId, { q, limit, offset: 0 }), (page) => ({ ...page, limit }))
    }),
    defineTool({
      name: "get_document",
      title: "Read a document",
      description: "Read one document: its original text, tags, metadata and memory count.",
      fields: documentId,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { document_id }) => documents.get(bankId, document_id)
    }),
    defineTool({
      name: "list_document_chunks",
      title: "List a document's chunks",
      description: "List the chunks a document was split into for extraction, in order, with their text: the exact " +
        "source passages its memories came from.",
      fields: {
        ...documentId,
        limit: withDefault(Limit, 100, "How many chunks to return (1-1000)."),
        offset: withDefault(Offset, 0, "How many chunks to skip.")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { document_id, limit, offset }) =>
        Effect.map(edits.chunks(bankId, document_id, { limit, offset }), (page) => ({ ...page, limit, offset }))
    }),
    defineTool({
      name: "delete_document",
      title: "Delete a document",
      description: "Delete a document and every memory extracted from it. Irreversible.",
      fields: documentId,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { document_id }) =>
        Effect.map(documents.remove(bankId, document_id), (deleted) => ({
          success: true,
          message: `document '${document_id}' and its ${deleted} memories deleted`,
          deleted_count: deleted
        }))
    }),
    defineTool({
      name: "list_tags",
      title: "List tags",
      description: "List the tags used on the bank's memories with how many memories carry each, most used first. " +
        "Use it to discover the tags to pass to recall or reflect.",
      fields: {
        q: optional(Schema.String, "A glob to filter tags (`*` any characters, `?` one), e.g. 'user:*'."),
        limit: withDefault(Limit, 100, "How many tags to return (1-1000).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { q, limit }) =>
        Effect.map(tags.list(bankId, { q, limit, offset: 0 }), (page) => ({ ...page, limit }))
    }),
    defineTool({
      name: "list_operations",
      title: "List background operations",
      description: "List the bank's background operations (retains, mental model refreshes, consolidation...), " +
        "newest first, optionally of one status.",
      fields: {
        status: optional(OperationStatus, "Only operations in this status."),
        limit: withDefault(Limit, 100, "How many operations to return (1-1000).")
      },
      hints: { readOnlyHint: true, idempotentHint: true },
      run: Effect.fn(function*(bankId, { status, limit }) {
        yield* banks.get(bankId)
        const page = yield* operations.list(bankId, { status, limit, offset: 0 })
        return { bank_id: bankId, operations: page.items.map(toListEntry), total: page.total, limit }
      })
    }),
    defineTool({
      name: "get_operation",
      title: "Read an operation",
      description: "Read a background operation's status (`pending`, `running`, `completed`, `failed`, `cancelled`, " +
        "or `not_found` for an unknown id) with its error message and sub-batches.",
      fields: operationId,
      hints: { readOnlyHint: true, idempotentHint: true },
      run: (bankId, { operation_id }) => operations.detail(bankId, operation_id)
    }),
    defineTool({
      name: "cancel_operation",
      title: "Cancel an operation",
      description: "Cancel a pending or running background operation; one that already finished cannot be cancelled.",
      fields: operationId,
      hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
      run: (bankId, { operation_id }) =>
        Effect.map(operations.cancel(bankId, operation_id), (status) => ({
          success: true,
          message: `operation '${operation_id}' cancelled`,
          operation_id,
          status
        }))
    })
  ]
})
