/**
 * Third-party MCP tooling against the running service over loopback, offline: the MCP Inspector in `--cli` mode
 * lists and calls tools, and the conformance suite's `server-initialize`, `ping`, `tools-list` and
 * `dns-rebinding-protection` scenarios pass. Both run as child processes on the project's Node 24.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { testApp, TestServer } from "../support/TestServer.ts"

const root = fileURLToPath(new URL("../../", import.meta.url))
const node = join(root, "node_modules/.bin/node")
const inspector = join(root, "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js")
const conformance = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js")

/** Runs a Node script to completion; resolves with its exit code and output (never rejects on a failing exit). */
const runNode = (args: ReadonlyArray<string>, cwd = root) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const options = { cwd, timeout: 60_000, env: { ...process.env, NO_COLOR: "1" } }
      execFile(node, [...args], options, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    })
  )

layer(testApp(), { excludeTestServices: true })("mcp tooling", (it) => {
  it.effect("the MCP Inspector CLI lists the tools and calls retain and recall", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const url = `${server.url}/mcp/inspected/`
      const listed = yield* runNode([inspector, "--cli", url, "--transport", "http", "--method", "tools/list"])
      assert.strictEqual(listed.code, 0, listed.stderr)
      const names = JSON.parse(listed.stdout).tools.map((tool: { name: string }) => tool.name)
      assert.strictEqual(names.length, 39)
      assert.includeMembers(names, ["retain", "recall", "reflect"])

      const call = (tool: string, ...args: Array<string>) =>
        runNode([
          inspector,
          "--cli",
          url,
          "--transport",
          "http",
          "--method",
          "tools/call",
          "--tool-name",
          tool,
          ...args.flatMap((arg) => ["--tool-arg", arg])
        ])
      const retained = yield* call("retain", "content=Noor waters the office ferns every Monday.")
      assert.strictEqual(retained.code, 0, retained.stderr)
      assert.isAbove(JSON.parse(retained.stdout).structuredContent.memories_created, 0)
      const recalled = yield* call("recall", "query=Who waters the ferns?", "max_tokens=512")
      assert.strictEqual(recalled.code, 0, recalled.stderr)
      assert.include(JSON.parse(recalled.stdout).structuredContent.results[0].text, "Noor")
    }))

  it.effect("the conformance scenarios server-initialize, ping, tools-list and dns-rebinding-protection pass", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      // The suite writes its results under the working directory: keep them out of the checkout.
      const cwd = mkdtempSync(join(tmpdir(), "engram-conformance-"))
      for (const scenario of ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"]) {
        const run = yield* runNode([conformance, "server", "--url", `${server.url}/mcp/`, "--scenario", scenario], cwd)
        assert.strictEqual(run.code, 0, `${scenario}: ${run.stdout}\n${run.stderr}`)
        assert.match(run.stdout, /Passed: (\d+)\/\1, 0 failed/, scenario)
      }
    }))
})
