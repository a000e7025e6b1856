/**
 * Property-based fuzzing of every MCP tool that `tools/list` shows, on the multi-bank endpoint and on a single-bank
 * one: hostile argument values, missing and extra arguments, arguments that are not an object, broken JSON-RPC
 * messages, and hostile bank ids in the endpoint path. Every answer is a JSON-RPC error or a tool result (an
 * error result is fine) — never a 5xx, an internal error or a crash; /health stays 200; the sentinel bank, which
 * calls reach only through ids that must not resolve to it, does not change. Every tool family of
 * SERVICE_API_MCP_TOOL_FAMILIES is on, so the feature tools are fuzzed with the spec's. Why a target bank and a
 * sentinel: see test/http/fuzz.test.ts.
 */
import { assert, layer } from "@effect/vitest"
import fc from "fast-check"
import { Effect } from "effect"
import { mcpToolFamilies } from "../../src/mcp/McpToolFamilies.ts"
import { seedBank, watchBanks } from "../support/fuzz/FuzzBanks.ts"
import { describeFindings, type Finding, fuzzTarget } from "../support/fuzz/FuzzRun.ts"
import { hostileSegments } from "../support/fuzz/Hostile.ts"
import { type McpMessage, mcpProblem, type McpToolListing, toolCallArbitrary } from "../support/fuzz/McpRequests.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const target = "fuzz-target"
const sentinel = "fuzz-sentinel"

const post = async (url: string, text: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: Buffer.from(text, "utf8")
  })
  return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
}

const send = async (url: string, message: McpMessage): Promise<string | undefined> => {
  const answer = await post(url, message.text)
  const problem = mcpProblem(answer.status, answer.contentType, answer.text)
  return problem === undefined ? undefined : `[${message.mutations}] ${problem}`
}

const listTools = (url: string) =>
  Effect.promise(async () => {
    const answer = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }))
    return JSON.parse(answer.text).result.tools as ReadonlyArray<McpToolListing>
  })

layer(testApp({ mcpToolFamilies }), { excludeTestServices: true })("fuzzing the MCP tools", (it) => {
  it.effect(
    "no tool call answers 5xx or an internal error; the server stays healthy; the sentinel is untouched",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* seedBank(sentinel)
        yield* seedBank(target)
        const banks = yield* watchBanks(target, sentinel)
        const findings: Array<Finding> = []

        for (const endpoint of ["/mcp/", `/mcp/${target}/`]) {
          const tools = yield* listTools(server.url + endpoint)
          assert.isAbove(tools.length, 60, `${endpoint} lists its tools, the feature families' too`)
          for (const tool of tools) {
            const name = `${endpoint} ${tool.name}`
            const context = { pools: yield* banks.pools, sentinel }
            const finding = yield* Effect.promise(() =>
              fuzzTarget(name, toolCallArbitrary(tool, context), (message) => send(server.url + endpoint, message))
            )
            if (finding !== undefined) findings.push(finding)
            findings.push(...yield* banks.afterEach(name))
          }
        }

        // The single-bank endpoint with a hostile bank id in its path: refused before any tool runs.
        const listMemories = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "list_memories", arguments: {} }
        })
        const finding = yield* Effect.promise(() =>
          fuzzTarget("/mcp/{bank_id}/", fc.constantFrom(...hostileSegments(sentinel)), (segment) =>
            send(`${server.url}/mcp/${segment}/`, {
              text: listMemories,
              mutations: `path bank_id=${segment.slice(0, 40)}`
            }))
        )
        if (finding !== undefined) {
          findings.push(finding)
        }
        findings.push(...yield* banks.afterEach("/mcp/{bank_id}/"))
        findings.push(...yield* banks.atEnd)

        assert.strictEqual(findings.length, 0, describeFindings(findings))
      }),
    600_000
  )
})
