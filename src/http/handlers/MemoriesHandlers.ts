/** REST handlers for retain and memory reads, over the `Retain` and `MemoryUnits` services. */
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import { reachesBank } from "../../auth/BankAccess.ts"
import { NotFound } from "../../domain/Errors.ts"
import { FileRetainRequest } from "../../domain/Files.ts"
import { Recall } from "../../memory/recall/Recall.ts"
import { FileRetain } from "../../memory/retain/FileRetain.ts"
import { HttpApiBuilder } from "effect/http-api"
import { Retain } from "../../memory/retain/Retain.ts"
import { usageJson } from "../../models/Llm.ts"
import { MemoryUnits } from "../../memory/MemoryUnits.ts"
import { MemoryCuration } from "../../memory/curation/MemoryCuration.ts"
import { MemoryRepos } from "../../repos/MemoryRepos.ts"
import { EngramApi } from "../api/Api.ts"
import { jsonAsIs } from "../JsonAsIs.ts"
import { formRequestDecoder } from "./FormRequest.ts"
import { paging } from "./Paging.ts"

export const MemoriesHandlers = HttpApiBuilder.group(
  EngramApi,
  "memories",
  Effect.fn(function*(handlers) {
    const retain = yield* Retain
    const units = yield* MemoryUnits
    const fileRetain = yield* FileRetain
    const recall = yield* Recall
    const curation = yield* MemoryCuration
    // `branch_name` reads a memory repo branch's workspace without checking it out.
    const repos = yield* MemoryRepos
    const decodeRequest = formRequestDecoder(FileRetainRequest)

    const reachableChunk = (chunkId: string) =>
      Effect.flatMap(
        units.chunk(chunkId),
        (chunk) =>
          Effect.flatMap(reachesBank(chunk.bankId), (reaches) =>
            reaches ? Effect.succeed(chunk) : Effect.fail(NotFound.of("chunk", chunkId)))
      )
    return handlers.handleAll({
      retain: Effect.fn(function*({ params, payload }) {
        if (payload.async === true) {
          const { operationId } = yield* retain.retainLater(params.bank_id, payload)
          return {
            success: true,
            bank_id: params.bank_id,
            items_count: payload.items.length,
            async: true,
            operation_id: operationId
          }
        }
        const outcome = yield* retain.retainNow(params.bank_id, payload)
        return {
          success: true,
          bank_id: params.bank_id,
          items_count: payload.items.length,
          async: false,
          operation_id: null,
          usage: usageJson(outcome.usage),
          memories_created: outcome.created,
          duplicates_skipped: outcome.duplicates
        }
      }),
      retainFiles: Effect.fn(function*({ params, payload }) {
        const request = payload.request === undefined || payload.request.trim() === ""
          ? {}
          : yield* decodeRequest(payload.request)
        const files = yield* Effect.forEach(
          payload.files,
          (file) =>
            Effect.promise(() => readFile(file.path)).pipe(Effect.map((bytes) => ({
              filename: file.name,
              contentType: file.contentType === "" ? undefined : file.contentType,
              bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
            })))
        )
        const operationIds = yield* fileRetain.submit(params.bank_id, files, request)
        return { operation_ids: operationIds, success: true, bank_id: params.bank_id, files_count: files.length }
      }),
      recall: Effect.fn(function*({ params, payload }) {
        const { branch_name, ...request } = payload
        return jsonAsIs(yield* recall.recall(yield* repos.readBank(params.bank_id, branch_name), request))
      }),
      list: Effect.fn(function*({ params, query }) {
        const { limit, offset } = paging(query)
        const page = yield* units.list(yield* repos.readBank(params.bank_id, query.branch_name), {
          type: query.type,
          q: query.q,
          limit,
          offset
        })
        return { items: page.items, total: page.total, limit, offset }
      }),
      // An invalidated memory is in the archive, not among the live ones; it still reads, with its state.
      get: ({ params, query }) =>
        Effect.flatMap(
          repos.readBank(params.bank_id, query.branch_name),
          (bankId) =>
            Effect.map(units.get(bankId, params.memory_id), (unit) => ({ ...unit, history: [] })).pipe(
              Effect.catchTag(
                "NotFound",
                (missing) => curation.get(bankId, params.memory_id).pipe(Effect.mapError(() => missing))
              )
            )
        ),
      clear: ({ params, query }) =>
        Effect.map(units.clear(params.bank_id, query.type), (deleted) => ({
          success: true,
          message: `deleted ${deleted} ${query.type ?? ""} memories`.replace("  ", " "),
          deleted_count: deleted
        })),
      // A chunk of a bank the key does not reach is answered as missing, like one that does not exist.
      chunk: ({ params }) =>
        Effect.map(reachableChunk(params.chunk_id), (chunk) => ({
          id: chunk.id,
          chunk_id: chunk.id,
          bank_id: chunk.bankId,
          document_id: chunk.documentId,
          chunk_index: chunk.chunkIndex,
          text: chunk.text,
          chunk_text: chunk.text,
          created_at: chunk.createdAt.toISOString()
        }))
    })
  })
)
