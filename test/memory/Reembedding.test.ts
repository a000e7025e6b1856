/**
 * Changing the embedding model of a deployment whose banks hold memories starts a background `reembed`
 * operation per bank instead of failing or mixing vector spaces.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { engramWith, Llm, Operations, Retain } from "../../src/index.ts"
import { trigramEmbeddings } from "../support/FakeModels.ts"
import { eventually } from "../support/Eventually.ts"
import { freshDatabaseSettings } from "../support/TestServer.ts"

describe("re-embedding", () => {
  it.live("a model change re-embeds every stored memory in the background", () =>
    Effect.gen(function*() {
      // Exactly the retained facts: no observations consolidated in the background.
      const settings = { ...freshDatabaseSettings(), enableObservations: false }
      const before = Layer.mergeAll(trigramEmbeddings(64), Llm.layerNone)
      const after = Layer.mergeAll(trigramEmbeddings(32), Llm.layerNone)

      yield* Effect.gen(function*() {
        const retain = yield* Retain
        yield* retain.retainNow("vectors", {
          items: [{ content: "Tea is brewed at 80 degrees." }, { content: "Coffee beans come from Ethiopia." }]
        })
      }).pipe(Effect.provide(engramWith(settings, before)))

      yield* Effect.gen(function*() {
        const operations = yield* Operations
        const sql = yield* SqlClient.SqlClient
        const listed = yield* operations.list("vectors", { taskType: "reembed", limit: 10, offset: 0 })
        assert.strictEqual(listed.items.length, 1)
        const id = listed.items[0]!.id
        const record = yield* eventually(
          operations.result("vectors", id),
          (record) => record.status !== "pending" && record.status !== "running",
          "60 seconds",
          { what: "the reembed finished" }
        )
        assert.strictEqual(record.status, "completed")
        assert.deepStrictEqual(record.result, { reembedded: 2, embedding_model: "test:trigram-32" })
        const rows = yield* sql<{ model: string; dims: number }>`
          SELECT embedding_model AS model, vector_dims(embedding) AS dims FROM memory_units WHERE bank_id = 'vectors'`
        assert.deepStrictEqual(rows.map((row) => [row.model, row.dims]), [["test:trigram-32", 32], [
          "test:trigram-32",
          32
        ]])
      }).pipe(Effect.provide(engramWith(settings, after)))
    }), 60_000)
})
