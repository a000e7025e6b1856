/**
 * The MCP tool listing through the SDK's own client: exactly the spec's 29 tools, the 8 knowledge-base tools, the
 * 0.9 client's update_memory and list_document_chunks and the 3 template and audit tools (42) on /mcp/ (each acting
 * on a bank with an optional bank_id) and 39 on /mcp/{bank_id}/ (no bank_id, no bank-management tools), with the
 * spec's parameters, required fields and defaults, and input schemas derived from the REST API's validation rules.
 */
import { assert, layer } from "@effect/vitest"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

/** The spec's table: parameters in order, the required ones, and the tool defaults. */
const spec: Record<string, { params: Array<string>; required?: Array<string>; defaults?: Record<string, unknown> }> = {
  retain: {
    params: ["content", "context", "timestamp", "tags", "metadata", "document_id"],
    required: ["content"],
    defaults: { context: "general" }
  },
  recall: {
    params: ["query", "max_tokens", "budget", "types", "tags", "tags_match", "query_timestamp", "branch_name"],
    required: ["query"],
    defaults: { max_tokens: 4096, budget: "high", tags_match: "any" }
  },
  reflect: {
    params: ["query", "context", "budget", "max_tokens", "response_schema", "tags", "tags_match", "branch_name"],
    required: ["query"],
    defaults: { budget: "low", max_tokens: 4096 }
  },
  create_mental_model: {
    params: ["name", "source_query", "mental_model_id", "tags", "max_tokens", "trigger_refresh_after_consolidation"],
    required: ["name", "source_query"],
    defaults: { max_tokens: 2048, trigger_refresh_after_consolidation: false }
  },
  list_mental_models: { params: ["tags"] },
  get_mental_model: { params: ["mental_model_id"], required: ["mental_model_id"] },
  delete_mental_model: { params: ["mental_model_id"], required: ["mental_model_id"] },
  refresh_mental_model: { params: ["mental_model_id"], required: ["mental_model_id"] },
  update_mental_model: {
    params: ["mental_model_id", "name", "source_query", "tags", "max_tokens", "trigger_refresh_after_consolidation"],
    required: ["mental_model_id"]
  },
  list_directives: { params: ["tags", "active_only"], defaults: { active_only: true } },
  create_directive: {
    params: ["name", "content", "priority", "is_active", "tags"],
    required: ["name", "content"],
    defaults: { is_active: true }
  },
  delete_directive: { params: ["directive_id"], required: ["directive_id"] },
  list_memories: { params: ["type", "q", "limit", "offset", "branch_name"], defaults: { limit: 100, offset: 0 } },
  get_memory: { params: ["memory_id", "branch_name"], required: ["memory_id"] },
  delete_memory: { params: ["memory_id"], required: ["memory_id"] },
  update_memory: {
    params: [
      "memory_id",
      "text",
      "context",
      "occurred_start",
      "occurred_end",
      "fact_type",
      "entities",
      "state",
      "reason"
    ],
    required: ["memory_id"]
  },
  list_document_chunks: {
    params: ["document_id", "limit", "offset"],
    required: ["document_id"],
    defaults: { limit: 100, offset: 0 }
  },
  list_documents: { params: ["q", "limit"], defaults: { limit: 100 } },
  get_document: { params: ["document_id"], required: ["document_id"] },
  delete_document: { params: ["document_id"], required: ["document_id"] },
  list_operations: { params: ["status", "limit"], defaults: { limit: 100 } },
  get_operation: { params: ["operation_id"], required: ["operation_id"] },
  cancel_operation: { params: ["operation_id"], required: ["operation_id"] },
  list_tags: { params: ["q", "limit"], defaults: { limit: 100 } },
  get_bank: { params: [] },
  update_bank: { params: ["name", "mission"] },
  delete_bank: { params: [] },
  clear_memories: { params: ["type"] },
  list_banks: { params: [] },
  create_bank: { params: ["bank_id", "name", "mission"], required: ["bank_id"] },
  get_bank_stats: { params: [] },
  // The knowledge base (issue 37): on top of the spec's table, in both endpoints.
  get_knowledge_tree: { params: [] },
  create_knowledge_folder: { params: ["name", "parent_id"], required: ["name"] },
  create_knowledge_page: {
    params: ["name", "source_query", "parent_id", "tags", "max_tokens"],
    required: ["name", "source_query"]
  },
  get_knowledge_page: { params: ["page_id"], required: ["page_id"] },
  search_knowledge_base: { params: ["query", "limit"], required: ["query"], defaults: { limit: 10 } },
  export_knowledge_base: { params: [] },
  update_knowledge_node: {
    params: ["node_id", "name", "parent_id", "source_query", "tags", "max_tokens"],
    required: ["node_id"]
  },
  delete_knowledge_node: { params: ["node_id"], required: ["node_id"] },
  // Bank templates and the audit log (issue 37).
  export_bank_template: { params: [] },
  import_bank_template: { params: ["manifest", "dry_run"], required: ["manifest"], defaults: { dry_run: false } },
  list_audit_logs: {
    params: ["action", "transport", "start_date", "end_date", "limit", "offset"],
    defaults: { limit: 50, offset: 0 }
  }
}
const multiBankOnly = ["list_banks", "create_bank", "get_bank_stats"]
/** Tools that name no bank or their own, so the multi-bank endpoint gives them no optional bank_id. */
const noBankArgument = ["list_banks", "create_bank"]

const byName = (tools: ReadonlyArray<Tool>) => new Map(tools.map((tool) => [tool.name, tool]))
const propertiesOf = (tool: Tool) => tool.inputSchema.properties as Record<string, Record<string, unknown>>

layer(testApp(), { excludeTestServices: true })("mcp tool listing", (it) => {
  it.effect("/mcp/ lists the spec's 29 tools the knowledge-base tools and the 0.9 client's 2 and the template and audit tools, each with its parameters, required fields, defaults and bank_id", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const tools = yield* (yield* connectMcp(`${server.url}/mcp/`)).tools
      assert.strictEqual(tools.length, 42)
      assert.sameMembers(tools.map((tool) => tool.name), Object.keys(spec))
      for (const [name, tool] of byName(tools)) {
        const expected = spec[name]!
        const bankArgument = noBankArgument.includes(name) ? [] : ["bank_id"]
        assert.deepStrictEqual(Object.keys(propertiesOf(tool)), [...expected.params, ...bankArgument], name)
        assert.sameMembers([...(tool.inputSchema.required ?? [])], expected.required ?? [], name)
        for (const [param, value] of Object.entries(expected.defaults ?? {})) {
          assert.deepStrictEqual(propertiesOf(tool)[param]!["default"], value, `${name}.${param} default`)
        }
        for (const [param, schema] of Object.entries(propertiesOf(tool))) {
          assert.isString(schema["description"], `${name}.${param} has a description`)
        }
        assert.isAbove(tool.description?.length ?? 0, 40, `${name} has a description an assistant can act on`)
        assert.strictEqual(tool.inputSchema["additionalProperties"], false, name)
      }
    })))

  it.effect("/mcp/{bank_id}/ lists the 39 bank tools without bank_id and without the bank-management tools", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      for (const path of ["/mcp/team-a/", "/mcp/team-a"]) {
        const tools = yield* (yield* connectMcp(`${server.url}${path}`)).tools
        assert.strictEqual(tools.length, 39, path)
        assert.sameMembers(
          tools.map((tool) => tool.name),
          Object.keys(spec).filter((name) => !multiBankOnly.includes(name))
        )
        for (const tool of tools) assert.deepStrictEqual(Object.keys(propertiesOf(tool)), spec[tool.name]!.params)
      }
    })))

  it.effect("input schemas carry the REST API's validation rules and the tools' hints", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const tools = byName(yield* (yield* connectMcp(`${server.url}/mcp`)).tools)
      const recall = propertiesOf(tools.get("recall")!)
      assert.deepStrictEqual(recall["budget"]!["enum"], ["low", "mid", "high"])
      assert.strictEqual(recall["max_tokens"]!["type"], "integer")
      assert.strictEqual(propertiesOf(tools.get("retain")!)["content"]!["minLength"], 1)
      assert.strictEqual(propertiesOf(tools.get("create_mental_model")!)["max_tokens"]!["minimum"], 256)
      assert.strictEqual(propertiesOf(tools.get("create_bank")!)["bank_id"]!["maxLength"], 128)
      assert.deepStrictEqual(propertiesOf(tools.get("list_operations")!)["status"]!["enum"], [
        "pending",
        "running",
        "completed",
        "failed",
        "cancelled"
      ])
      assert.strictEqual(tools.get("recall")!.annotations?.readOnlyHint, true)
      assert.strictEqual(tools.get("delete_bank")!.annotations?.destructiveHint, true)
    })))
})
