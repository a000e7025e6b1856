/**
 * Every MCP tool called through the SDK's own client on /mcp/: its happy path against the real services, and one
 * bad argument (or missing record) that must come back as an `isError` result with a message naming the problem —
 * never a protocol failure. The bank is chosen by each call's `bank_id`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Operations } from "../../src/bank/Operations.ts"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually, TestTaskHandlers } from "../support/TestTasks.ts"

const bank = "mcp-all"

layer(testApp({}, TestTaskHandlers), { excludeTestServices: true })("mcp tool calls", (it) => {
  it.effect("bank tools: create_bank, list_banks, get_bank, update_bank, get_bank_stats", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`)

      const created = yield* mcp.ok("create_bank", { bank_id: "mcp-banks", name: "Bank tools", mission: "Test banks." })
      assert.strictEqual(created.created, true)
      assert.strictEqual(created.bank.name, "Bank tools")
      assert.strictEqual(created.bank.mission, "Test banks.")
      const again = yield* mcp.ok("create_bank", { bank_id: "mcp-banks", name: "Ignored" })
      assert.strictEqual(again.created, false)
      assert.strictEqual(again.bank.name, "Bank tools")
      assert.include(yield* mcp.fails("create_bank", { name: "no id" }), "bank_id: required")
      assert.include(yield* mcp.fails("create_bank", { bank_id: "has space" }), "bank_id")

      const listed = yield* mcp.ok("list_banks")
      assert.include(listed.banks.map((b: any) => b.bank_id), "mcp-banks")
      assert.include(yield* mcp.fails("list_banks", { bogus: true }), "bogus: unknown argument")

      const read = yield* mcp.ok("get_bank", { bank_id: "mcp-banks" })
      assert.strictEqual(read.name, "Bank tools")
      assert.deepStrictEqual(read.disposition, { skepticism: 3, literalism: 3, empathy: 3 })
      assert.include(yield* mcp.fails("get_bank", { bank_id: "no-such-bank" }), "bank 'no-such-bank' not found")

      const updated = yield* mcp.ok("update_bank", { bank_id: "mcp-banks", mission: "Remember test runs." })
      assert.strictEqual(updated.name, "Bank tools")
      assert.strictEqual(updated.mission, "Remember test runs.")
      const rest = yield* server.request("GET", "/v1/default/banks/mcp-banks/profile")
      assert.strictEqual(rest.body.mission, "Remember test runs.")
      assert.include(yield* mcp.fails("update_bank", { bank_id: "mcp-banks", name: 42 }), "name")

      const stats = yield* mcp.ok("get_bank_stats", { bank_id: "mcp-banks" })
      assert.strictEqual(stats.bank_id, "mcp-banks")
      assert.strictEqual(stats.total_nodes, 0)
      assert.include(yield* mcp.fails("get_bank_stats", { bank_id: "no-such-bank" }), "not found")
    })))

  it.effect("memory tools: retain, recall, list/get/delete memories, documents, tags, clear_memories", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`)
      const inBank = (args: Record<string, unknown> = {}) => ({ bank_id: bank, ...args })

      const retained = yield* mcp.ok(
        "retain",
        inBank({
          content: "Priya moved to Lisbon in March 2024 and now works as a cartographer.",
          tags: ["team:maps"],
          document_id: "priya-notes",
          timestamp: "2024-04-02T10:00:00Z",
          metadata: { source: "mcp-test" }
        })
      )
      assert.isAbove(retained.memories_created, 0)
      assert.strictEqual(retained.bank_id, bank)
      yield* mcp.ok("retain", inBank({ content: "Tomás prefers green tea to coffee." }))
      assert.include(yield* mcp.fails("retain", inBank({ content: "" })), "content")
      assert.include(yield* mcp.fails("retain", inBank({ tags: ["x"] })), "content: required")

      const recalled = yield* mcp.ok("recall", inBank({ query: "Where did Priya move?" }))
      assert.include(recalled.results[0].text, "Lisbon")
      const tagged = yield* mcp.ok(
        "recall",
        inBank({ query: "Priya tea", tags: ["team:maps"], tags_match: "all_strict" })
      )
      assert.isAbove(tagged.results.length, 0)
      assert.isTrue(tagged.results.every((result: any) => result.tags.includes("team:maps")))
      assert.include(yield* mcp.fails("recall", inBank({ query: "tea", budget: "huge" })), "budget")

      const listed = yield* mcp.ok("list_memories", inBank())
      assert.isAbove(listed.total, 1)
      assert.strictEqual(listed.limit, 100)
      const priya = listed.items.find((item: any) => item.text.includes("Priya"))
      assert.strictEqual(priya.context, "general", "retain's context defaults to general")
      assert.deepStrictEqual(priya.metadata, { source: "mcp-test" })
      const filtered = yield* mcp.ok("list_memories", inBank({ q: "green tea", limit: 5 }))
      assert.strictEqual(filtered.total, 1)
      assert.include(yield* mcp.fails("list_memories", inBank({ limit: 0 })), "limit")

      const memory = yield* mcp.ok("get_memory", inBank({ memory_id: priya.id }))
      assert.strictEqual(memory.text, priya.text)
      const missing = yield* mcp.fails("get_memory", inBank({ memory_id: "no-such-memory" }))
      assert.include(missing, "memory 'no-such-memory' not found")

      const documents = yield* mcp.ok("list_documents", inBank())
      assert.deepStrictEqual(documents.items.map((doc: any) => doc.document_id), ["priya-notes"])
      assert.include(yield* mcp.fails("list_documents", inBank({ limit: "ten" })), "limit")
      const document = yield* mcp.ok("get_document", inBank({ document_id: "priya-notes" }))
      assert.include(document.original_text, "cartographer")
      assert.include(yield* mcp.fails("get_document", inBank({ document_id: "nope" })), "document 'nope' not found")

      const tags = yield* mcp.ok("list_tags", inBank({ q: "team:*" }))
      assert.deepStrictEqual(tags.items.map((item: any) => item.tag), ["team:maps"])
      assert.isAbove(tags.items[0].count, 0)
      assert.include(yield* mcp.fails("list_tags", inBank({ limit: 5000 })), "limit")

      const tomas = listed.items.find((item: any) => item.text.includes("Tomás"))
      const deleted = yield* mcp.ok("delete_memory", inBank({ memory_id: tomas.id }))
      assert.isTrue(deleted.success)
      assert.strictEqual((yield* server.request("GET", `/v1/default/banks/${bank}/memories/${tomas.id}`)).status, 404)
      assert.include(yield* mcp.fails("delete_memory", inBank({ memory_id: tomas.id })), "not found")

      const removedDocument = yield* mcp.ok("delete_document", inBank({ document_id: "priya-notes" }))
      assert.isAbove(removedDocument.deleted_count, 0)
      assert.include(yield* mcp.fails("delete_document", inBank({ document_id: "priya-notes" })), "not found")

      yield* mcp.ok("retain", inBank({ content: "The office plants are watered on Fridays." }))
      const cleared = yield* mcp.ok("clear_memories", inBank())
      assert.isAbove(cleared.deleted_count, 0)
      assert.strictEqual((yield* mcp.ok("list_memories", inBank())).total, 0)
      assert.include(yield* mcp.fails("clear_memories", inBank({ type: "dreams" })), "type")
    })))

  it.effect("reflect, directives and mental models", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": "mcp-models" })
      yield* mcp.ok("retain", { content: "The team ships a release every second Tuesday.", tags: ["process"] })

      const answer = yield* mcp.ok("reflect", { query: "How often does the team release?" })
      assert.isString(answer.text)
      assert.include(answer.text, "Tuesday")
      assert.include(yield* mcp.fails("reflect", { query: "x", max_tokens: 1 }), "max_tokens")

      const directive = yield* mcp.ok("create_directive", { name: "Cite", content: "Always cite the memory used." })
      assert.strictEqual(directive.is_active, true)
      assert.strictEqual(directive.bank_id, "mcp-models")
      assert.include(yield* mcp.fails("create_directive", { name: "No content" }), "content: required")
      const directives = yield* mcp.ok("list_directives")
      assert.deepStrictEqual(directives.items.map((d: any) => d.name), ["Cite"])
      assert.include(yield* mcp.fails("list_directives", { active_only: "yes" }), "active_only")

      const created = yield* mcp.ok("create_mental_model", {
        name: "Release cadence",
        source_query: "How often does the team release?",
        tags: ["process"]
      })
      assert.strictEqual(created.mental_model_id, "release-cadence")
      assert.isString(created.operation_id)
      assert.include(
        yield* mcp.fails("create_mental_model", { name: "Too short", source_query: "x", max_tokens: 10 }),
        "max_tokens"
      )
      const models = yield* mcp.ok("list_mental_models", { tags: ["process"] })
      assert.deepStrictEqual(models.items.map((m: any) => m.id), ["release-cadence"])
      assert.include(yield* mcp.fails("list_mental_models", { tags: "process" }), "tags")

      const model = yield* mcp.ok("get_mental_model", { mental_model_id: "release-cadence" })
      assert.strictEqual(model.trigger.refresh_after_consolidation, false)
      assert.strictEqual(model.max_tokens, 2048)
      assert.include(yield* mcp.fails("get_mental_model", { mental_model_id: "ghost" }), "not found")

      const updated = yield* mcp.ok("update_mental_model", {
        mental_model_id: "release-cadence",
        name: "Release rhythm",
        trigger_refresh_after_consolidation: true
      })
      assert.strictEqual(updated.name, "Release rhythm")
      assert.strictEqual(updated.trigger.refresh_after_consolidation, true)
      assert.include(
        yield* mcp.fails("update_mental_model", { mental_model_id: "release-cadence", max_tokens: 100000 }),
        "max_tokens"
      )

      const refreshed = yield* mcp.ok("refresh_mental_model", { mental_model_id: "release-cadence" })
      assert.isString(refreshed.operation_id)
      assert.include(yield* mcp.fails("refresh_mental_model", { mental_model_id: "ghost" }), "not found")
      yield* eventually(
        mcp.ok("get_mental_model", { mental_model_id: "release-cadence" }),
        (current) => current.content.includes("Tuesday")
      )

      assert.isTrue((yield* mcp.ok("delete_mental_model", { mental_model_id: "release-cadence" })).success)
      assert.include(yield* mcp.fails("delete_mental_model", { mental_model_id: "release-cadence" }), "not found")
      assert.strictEqual((yield* mcp.ok("delete_directive", { directive_id: directive.id })).id, directive.id)
      assert.include(yield* mcp.fails("delete_directive", { directive_id: directive.id }), "not found")
    })))

  it.effect("operation tools, delete_bank, and an unknown bank is a tool error", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const operations = yield* Operations
      const mcp = yield* connectMcp(`${server.url}/mcp/`)
      yield* mcp.ok("create_bank", { bank_id: "mcp-ops" })
      const blocking = yield* operations.submit({
        bankId: "mcp-ops",
        taskType: "test_block",
        payload: { key: "mcp-1" }
      })
      const queued = yield* operations.submit({ bankId: "mcp-ops", taskType: "test_echo", payload: {} })

      const listed = yield* mcp.ok("list_operations", { bank_id: "mcp-ops", status: "pending" })
      assert.include(listed.operations.map((op: any) => op.id), queued.id)
      assert.include(yield* mcp.fails("list_operations", { bank_id: "mcp-ops", status: "done" }), "status")
      assert.include(yield* mcp.fails("list_operations", { bank_id: "ghost-bank" }), "create_bank")

      const detail = yield* mcp.ok("get_operation", { bank_id: "mcp-ops", operation_id: queued.id })
      assert.strictEqual(detail.operation_id, queued.id)
      const unknown = yield* mcp.ok("get_operation", { bank_id: "mcp-ops", operation_id: "no-such-op" })
      assert.strictEqual(unknown.status, "not_found")
      assert.include(yield* mcp.fails("get_operation", { bank_id: "mcp-ops" }), "operation_id: required")

      for (const id of [queued.id, blocking.id]) {
        const cancelled = yield* mcp.ok("cancel_operation", { bank_id: "mcp-ops", operation_id: id })
        assert.strictEqual(cancelled.status, "cancelled")
      }
      assert.include(yield* mcp.fails("cancel_operation", { bank_id: "mcp-ops", operation_id: queued.id }), "cancelled")

      const deleted = yield* mcp.ok("delete_bank", { bank_id: "mcp-ops" })
      assert.isTrue(deleted.success)
      assert.include(yield* mcp.fails("delete_bank", { bank_id: "mcp-ops" }), "bank 'mcp-ops' not found")
      assert.strictEqual((yield* server.request("GET", "/v1/default/banks/mcp-ops/stats")).status, 404)
    })))
})
