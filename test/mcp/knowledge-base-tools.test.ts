/**
 * The knowledge-base MCP tools through the SDK's own client, on the multi-bank endpoint (bank by argument) and a
 * single-bank one: every tool's happy path against the real service (what one tool writes, REST reads), and the
 * REST rules as tool errors — a cycle, a page as parent, a blank name, page options on a folder, unknown nodes and
 * banks.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { connectMcp } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

layer(testApp({ operationRetryBase: Duration.millis(5) }), { excludeTestServices: true })(
  "knowledge-base MCP tools",
  (it) => {
    it.effect("create, read, search, export, move and delete through the tools on /mcp/ and /mcp/{bank_id}/", () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", "/v1/default/banks/kb-mcp", { json: {} })
        yield* server.request("POST", "/v1/default/banks/kb-mcp/memories", {
          json: { items: [{ content: "The team deploys to production every Tuesday after the standup." }] }
        })
        const multi = yield* connectMcp(`${server.url}/mcp/`)
        const single = yield* connectMcp(`${server.url}/mcp/kb-mcp/`)
        const inBank = (args: Record<string, unknown> = {}) => ({ bank_id: "kb-mcp", ...args })

        const ops = yield* multi.ok("create_knowledge_folder", inBank({ name: "Operations" }))
        assert.strictEqual(ops.kind, "folder")
        const nested = yield* single.ok("create_knowledge_folder", { name: "Releases", parent_id: ops.id })
        assert.strictEqual(nested.parent_id, ops.id)
        const page = yield* single.ok("create_knowledge_page", {
          name: "Deployments",
          source_query: "When does the team deploy?",
          parent_id: nested.id,
          tags: ["type:runbook"]
        })
        assert.isString(page.page_id)
        assert.isString(page.mental_model_id)
        yield* eventually(
          single.ok("get_operation", { operation_id: page.operation_id }),
          (detail) => ["completed", "failed"].includes(detail.status),
          Duration.seconds(60)
        )

        const tree = yield* multi.ok("get_knowledge_tree", inBank())
        assert.deepStrictEqual(tree.roots.map((node: any) => node.name), ["Operations"])
        assert.strictEqual(tree.roots[0].children[0].children[0].id, page.page_id)
        const rest = yield* server.request("GET", "/v1/default/banks/kb-mcp/knowledge-base/tree")
        assert.deepStrictEqual(rest.body, tree, "the tool and the route answer the same tree")

        const read = yield* single.ok("get_knowledge_page", { page_id: page.page_id })
        assert.strictEqual(read.type, "runbook")
        assert.isString(read.body)
        assert.include(read.markdown, "name: \"Deployments\"")

        const found = yield* single.ok("search_knowledge_base", { query: "deploy" })
        assert.deepStrictEqual(found.results.map((hit: any) => hit.id), [page.page_id])
        const exported = yield* multi.ok("export_knowledge_base", inBank())
        assert.deepStrictEqual(exported.files.map((file: any) => file.path), [
          "index.md",
          `${page.page_id}.md`,
          `log/${page.page_id}.md`
        ])

        const moved = yield* single.ok("update_knowledge_node", {
          node_id: page.page_id,
          parent_id: ops.id,
          max_tokens: 1024
        })
        assert.strictEqual(moved.parent_id, ops.id)
        const model = yield* server.request("GET", `/v1/default/banks/kb-mcp/mental-models/${page.mental_model_id}`)
        assert.strictEqual(model.body.max_tokens, 1024)
        const toRoot = yield* single.ok("update_knowledge_node", { node_id: nested.id, parent_id: null })
        assert.isNull(toRoot.parent_id)

        const removed = yield* multi.ok("delete_knowledge_node", inBank({ node_id: ops.id }))
        assert.deepStrictEqual(removed, { success: true, node_id: ops.id, deleted_count: 2, deleted_pages: 1 })
        assert.deepStrictEqual((yield* single.ok("get_knowledge_tree")).roots.map((node: any) => node.id), [nested.id])
      })))

    it.effect("the REST rules come back as tool errors naming the argument", () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", "/v1/default/banks/kb-mcp-rules", { json: {} })
        const mcp = yield* connectMcp(`${server.url}/mcp/kb-mcp-rules/`)
        const outer = yield* mcp.ok("create_knowledge_folder", { name: "Outer" })
        const inner = yield* mcp.ok("create_knowledge_folder", { name: "Inner", parent_id: outer.id })
        const page = yield* mcp.ok("create_knowledge_page", { name: "P", source_query: "What?" })

        assert.include(
          yield* mcp.fails("update_knowledge_node", { node_id: outer.id, parent_id: inner.id }),
          "parent_id: cannot move 'Outer' into itself or one of its own subfolders"
        )
        assert.include(
          yield* mcp.fails("create_knowledge_folder", { name: "X", parent_id: page.page_id }),
          "parent_id: '" + page.page_id + "' is a page"
        )
        assert.include(yield* mcp.fails("create_knowledge_folder", { name: " " }), "name: must not be empty")
        assert.include(yield* mcp.fails("create_knowledge_page", { name: "X" }), "source_query: required")
        assert.include(
          yield* mcp.fails("update_knowledge_node", { node_id: outer.id, tags: ["a"] }),
          "tags: only pages have this option"
        )
        assert.include(yield* mcp.fails("search_knowledge_base", { query: "x", limit: 500 }), "limit")
        assert.include(
          yield* mcp.fails("get_knowledge_page", { page_id: outer.id }),
          `knowledge page '${outer.id}' not found`
        )
        assert.include(
          yield* mcp.fails("delete_knowledge_node", { node_id: "nope" }),
          "knowledge node 'nope' not found"
        )
        assert.include(yield* mcp.fails("get_knowledge_tree", { bogus: 1 }), "bogus: unknown argument")

        const other = yield* connectMcp(`${server.url}/mcp/`)
        assert.include(yield* other.fails("get_knowledge_tree", { bank_id: "kb-nobody" }), "bank 'kb-nobody' not found")
      })))
  }
)
