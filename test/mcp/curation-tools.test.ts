/**
 * The MCP tools of the 0.9 client's document and memory operations, called through the SDK's own client on /mcp/:
 * update_memory (edit, invalidate, restore) and list_document_chunks, each with a bad argument or missing record
 * that must come back as an `isError` result naming the problem, like the REST routes' 4xx.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = "mcp-curation"

layer(testApp(), { excludeTestServices: true })("mcp curation tools", (it) => {
  it.effect("update_memory and list_document_chunks act as their REST routes do", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`)
      yield* mcp.ok("retain", {
        bank_id: bank,
        content: "The staging cluster runs on three nodes in Frankfurt.",
        document_id: "infra-notes"
      })
      const chunks = yield* mcp.ok("list_document_chunks", { bank_id: bank, document_id: "infra-notes" })
      assert.strictEqual(chunks.total, 1)
      assert.strictEqual(chunks.items[0].chunk_index, 0)
      assert.include(chunks.items[0].chunk_text, "Frankfurt")
      assert.include(
        yield* mcp.fails("list_document_chunks", { bank_id: bank, document_id: "nope" }),
        "document 'nope' not found"
      )
      assert.include(
        yield* mcp.fails("list_document_chunks", { bank_id: bank, document_id: "infra-notes", limit: 0 }),
        "limit"
      )

      const listed = yield* mcp.ok("list_memories", { bank_id: bank })
      const fact = listed.items[0]
      const edited = yield* mcp.ok("update_memory", {
        bank_id: bank,
        memory_id: fact.id,
        text: "The staging cluster runs on five nodes in Frankfurt.",
        entities: ["Frankfurt"]
      })
      assert.strictEqual(edited.text, "The staging cluster runs on five nodes in Frankfurt.")
      assert.deepStrictEqual(edited.entities, ["Frankfurt"])
      const retired = yield* mcp.ok("update_memory", {
        bank_id: bank,
        memory_id: fact.id,
        state: "invalidated",
        reason: "cluster retired"
      })
      assert.strictEqual(retired.state, "invalidated")
      assert.strictEqual(retired.invalidation_reason, "cluster retired")
      assert.strictEqual((yield* mcp.ok("list_memories", { bank_id: bank })).total, listed.total - 1)
      const restored = yield* mcp.ok("update_memory", { bank_id: bank, memory_id: fact.id, state: "valid" })
      assert.strictEqual(restored.state, "valid")
      assert.strictEqual((yield* mcp.ok("list_memories", { bank_id: bank })).total, listed.total)
      assert.include(yield* mcp.fails("update_memory", { bank_id: bank, memory_id: fact.id }), "at least one field")
      assert.include(yield* mcp.fails("update_memory", { bank_id: bank, memory_id: fact.id, state: "gone" }), "state")
      assert.include(
        yield* mcp.fails("update_memory", { bank_id: bank, memory_id: "nope", state: "valid" }),
        "memory 'nope' not found"
      )
    })))
})
