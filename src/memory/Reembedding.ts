/**
 * Keeps every bank in one vector space. When the configured embedding model differs from the one a bank's
 * memories were embedded with, a `reembed` operation re-embeds them in the background (in pages, resumable
 * after a crash because it only touches units still on another model) instead of failing or silently
 * comparing vectors from different models. Checked at start, for every bank.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Embeddings, modelKey } from "../models/Embeddings.ts"
import { Operations } from "../bank/Operations.ts"
import { TaskFailure, TaskRegistry } from "../bank/TaskRegistry.ts"
import { param } from "../storage/VectorParam.ts"

const pageSize = 256

export { modelKey } from "../models/Embeddings.ts"

export const ReembeddingLive = Layer.effectDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const embeddings = yield* Embeddings
  const registry = yield* TaskRegistry
  const operations = yield* Operations
  const current = modelKey(embeddings.identity)

  yield* registry.register("reembed", (operation) =>
    Effect.gen(function*() {
      let total = 0
      while (true) {
        const page = yield* sql<{ id: string; text: string }>`
          SELECT id, text FROM memory_units
          WHERE bank_id = ${operation.bankId} AND embedding_model IS DISTINCT FROM ${current}
          ORDER BY seq LIMIT ${pageSize}`.pipe(Effect.orDie)
        if (page.length === 0) break
        const vectors = yield* embeddings.embedDocuments(page.map((row) => row.text)).pipe(
          Effect.mapError((error) =>
            new TaskFailure({ message: `re-embedding failed: ${error.message}`, retryable: error.retryable })
          )
        )
        const rows = page.map((row, index) => ({ id: row.id, embedding: param(vectors[index]!) }))
        yield* sql`UPDATE memory_units u SET embedding = x.embedding::vector, embedding_model = ${current}, updated_at = now()
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(id text, embedding text)
          WHERE u.id = x.id`.pipe(Effect.orDie)
        total += page.length
      }
      yield* sql`UPDATE banks SET embedding_model = ${current} WHERE bank_id = ${operation.bankId}`.pipe(Effect.orDie)
      return { reembedded: total, embedding_model: current }
    }))

  // Banks holding vectors from another model get one pending reembed operation (never two).
  const stale = yield* sql<{ bankId: string }>`
    SELECT DISTINCT u.bank_id FROM memory_units u
    WHERE u.embedding_model IS DISTINCT FROM ${current}
      AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.bank_id = u.bank_id AND o.task_type = 'reembed'
        AND o.status IN ('pending', 'running'))`.pipe(Effect.orDie)
  for (const { bankId } of stale) {
    yield* operations.submit({ bankId, taskType: "reembed", payload: { embedding_model: current } })
    yield* Effect.logInfo(`bank ${bankId} holds vectors of another embedding model: re-embedding with ${current}`)
  }
}))
