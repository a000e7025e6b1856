/**
 * The codebase MCP tools through the SDK's own client, with SERVICE_API_CODEBASE_MCP_TOOLS on: listed on both
 * endpoints on top of the spec's tools; a repository imported from a loopback git host, listed, searched (chunks
 * and symbols), its impact traced, chunks routed and the snapshot approved into memories that list_memories
 * then finds with their `path:line` provenance; bad arguments come back as `isError` results naming the problem.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { type FakeGitHost, fakeGitHost } from "../support/FakeGitHost.ts"
import { connectMcp, type McpSession } from "../support/McpClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"
import { makeZip } from "../support/ZipWriter.ts"

class GitHost extends Context.Service<GitHost, FakeGitHost>()("test/mcp/codebase-tools/GitHost") {}

const app = Layer.unwrap(Effect.gen(function*() {
  const host = yield* GitHost
  return testApp({
    codebases: {
      ...defaultCodebaseSettings,
      githostApiUrl: host.origin,
      githostAllowPrivateNetworks: true,
      parseWorkers: 1,
      mcpTools: true
    }
  })
})).pipe(Layer.provideMerge(Layer.effect(GitHost, fakeGitHost("acme", "shop"))))

const sources: Record<string, string> = {
  "shop/auth.ts": `import { hashPassword } from "./crypto.ts"
/** Checks a user's password and opens a session. */
export function login(user: string, password: string) {
  if (!user || !password) return null
  return { session: hashPassword(password) }
}
`,
  "shop/crypto.ts": `import { createHash } from "node:crypto"
export const hashPassword = (password: string) => createHash("sha256").update(password).digest("hex")
`,
  "shop/cart.py": `def checkout(items):
    return sum(i.price for i in items)
`
}

const codebaseTools = [
  "import_codebase",
  "list_codebases",
  "search_codebase_chunks",
  "search_codebase_symbols",
  "codebase_impact",
  "route_codebase_chunks",
  "approve_codebase"
]

const settledOperation = (mcp: McpSession, operationId: string) =>
  eventually(
    mcp.ok("get_operation", { operation_id: operationId }),
    (detail) => ["completed", "failed"].includes(detail.status),
    Duration.seconds(60)
  )

layer(app, { excludeTestServices: true })("codebase MCP tools", (it) => {
  it.effect("are listed on /mcp/ (with bank_id) and /mcp/{bank_id}/ on top of the spec's tools", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const multi = yield* (yield* connectMcp(`${server.url}/mcp/`)).tools
      assert.strictEqual(multi.length, 42 + codebaseTools.length)
      const single = yield* (yield* connectMcp(`${server.url}/mcp/cb-mcp/`)).tools
      assert.strictEqual(single.length, 39 + codebaseTools.length)
      for (const name of codebaseTools) {
        const tool = multi.find((candidate) => candidate.name === name)
        assert.isDefined(tool, name)
        assert.isAbove(tool!.description?.length ?? 0, 40, name)
        assert.property(tool!.inputSchema.properties, "bank_id", name)
        const inBank = single.find((candidate) => candidate.name === name)!
        assert.notProperty(inBank.inputSchema.properties ?? {}, "bank_id", name)
      }
      const impact = multi.find((tool) => tool.name === "codebase_impact")!
      assert.deepStrictEqual(impact.inputSchema.required, ["codebase_id"])
    })))

  it.effect("import from the git host, list, search, impact, route and approve into memory", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* GitHost
      host.push(
        "abc1",
        makeZip(Object.entries(sources).map(([name, data]) => ({ name: `acme-shop-abc1/${name}`, data })))
      )
      const mcp = yield* connectMcp(`${server.url}/mcp/cb-mcp/`)

      assert.include(yield* mcp.fails("import_codebase", {}), "owner and repo (or repo_url) are required")
      assert.include(yield* mcp.fails("import_codebase", { owner: "acme", repo: "shop", ref: "nope" }), "nope")
      const imported = yield* mcp.ok("import_codebase", { owner: "acme", repo: "shop" })
      assert.strictEqual(imported.resolved_commit_sha, "abc1")
      assert.strictEqual((yield* settledOperation(mcp, imported.operation_id)).status, "completed")
      const codebaseId = imported.codebase_id

      const listed = (yield* mcp.ok("list_codebases")).items
      assert.deepStrictEqual(listed.map((item: any) => [item.id, item.name, item.snapshot_status]), [[
        codebaseId,
        "acme/shop",
        "review_required"
      ]])

      const symbols = (yield* mcp.ok("search_codebase_symbols", { codebase_id: codebaseId, q: "login" })).items
      assert.strictEqual(symbols[0].path, "shop/auth.ts")
      assert.strictEqual(symbols[0].name, "login")
      assert.include(yield* mcp.fails("search_codebase_symbols", { codebase_id: codebaseId, q: "" }), "q")
      assert.include(
        yield* mcp.fails("search_codebase_symbols", { codebase_id: "no-such-codebase", q: "login" }),
        "not found"
      )

      const chunks = yield* mcp.ok("search_codebase_chunks", {
        codebase_id: codebaseId,
        q: "hashPassword",
        order_by: "path"
      })
      assert.isAbove(chunks.items.length, 0)
      assert.isTrue(chunks.items.every((item: any) => item.path.startsWith("shop/")))
      const pythonOnly =
        (yield* mcp.ok("search_codebase_chunks", { codebase_id: codebaseId, language: "python" })).items
      assert.deepStrictEqual([...new Set(pythonOnly.map((item: any) => item.path))], ["shop/cart.py"])
      assert.include(yield* mcp.fails("search_codebase_chunks", { codebase_id: codebaseId, limit: 0 }), "limit")

      const impact = yield* mcp.ok("codebase_impact", { codebase_id: codebaseId, path: "shop/crypto.ts" })
      assert.include(impact.impacted_files.map((file: any) => file.path), "shop/auth.ts")
      assert.isString(impact.explanation)
      assert.include(
        yield* mcp.fails("codebase_impact", { codebase_id: codebaseId, path: "shop/crypto.ts", symbol: "login" }),
        "exactly one"
      )

      const login = chunks.items.find((item: any) => item.path === "shop/auth.ts") ??
        (yield* mcp.ok("search_codebase_chunks", { codebase_id: codebaseId, q: "login" })).items[0]
      const routed = yield* mcp.ok("route_codebase_chunks", {
        codebase_id: codebaseId,
        item_ids: [login.id],
        target: "memory"
      })
      assert.strictEqual(routed.updated_count, 1)
      assert.include(
        yield* mcp.fails("route_codebase_chunks", { codebase_id: codebaseId, item_ids: [login.id], target: "trash" }),
        "target"
      )

      const approved = yield* mcp.ok("approve_codebase", { codebase_id: codebaseId })
      assert.strictEqual(approved.memory_ingest_mode, "direct")
      assert.strictEqual((yield* settledOperation(mcp, approved.operation_id)).status, "completed")
      const memories = (yield* mcp.ok("list_memories", { q: "hashPassword" })).items
      assert.isAbove(memories.length, 0)
      assert.isTrue(
        memories.some((memory: any) => JSON.stringify(memory).includes("shop/auth.ts:")),
        JSON.stringify(memories[0])
      )
      assert.include(
        yield* mcp.fails("approve_codebase", { codebase_id: codebaseId, snapshot_id: "no-such-snapshot" }),
        "not found"
      )
      assert.include(
        yield* mcp.fails("approve_codebase", { codebase_id: codebaseId, memory_ingest_mode: "later" }),
        "memory_ingest_mode"
      )
    })))
})
