/**
 * The MCP SDK's own client over a real socket, wrapped for Effect tests: connect (initialize) to an endpoint URL
 * with optional headers, list tools, call a tool and take its result apart. A raw POST helper sends headers fetch
 * will not (Host) for the guard tests.
 */
import { assert } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { request } from "node:http"

export interface McpSession {
  readonly tools: Effect.Effect<ReadonlyArray<Tool>>
  readonly call: (name: string, args?: Record<string, unknown>) => Effect.Effect<CallToolResult>
  /** Calls a tool that must succeed and returns its structured content (checked against the JSON text). */
  readonly ok: (name: string, args?: Record<string, unknown>) => Effect.Effect<any>
  /** Calls a tool that must fail as a tool error (`isError`) and returns the error text. */
  readonly fails: (name: string, args?: Record<string, unknown>) => Effect.Effect<string>
}

const textOf = (result: CallToolResult) => {
  const first = result.content[0]
  return first?.type === "text" ? first.text : ""
}

/** Connects for the rest of the scope; the client closes with it. */
export const connectMcp = (url: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "engram-test", version: "0.0.0" })
        await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
        return client
      }),
      (client) => Effect.promise(() => client.close())
    )
    const call = (name: string, args: Record<string, unknown> = {}) =>
      Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>)
    const session: McpSession = {
      tools: Effect.promise(() => client.listTools()).pipe(Effect.map((listed) => listed.tools)),
      call,
      ok: (name, args) =>
        Effect.map(call(name, args), (result) => {
          assert.notStrictEqual(result.isError, true, `${name} failed: ${textOf(result)}`)
          const text = JSON.parse(textOf(result))
          assert.deepStrictEqual(text, result.structuredContent, `${name}: text and structure differ`)
          return result.structuredContent
        }),
      fails: (name, args) =>
        Effect.map(call(name, args), (result) => {
          assert.strictEqual(result.isError, true, `${name} should have failed: ${textOf(result)}`)
          return textOf(result)
        })
    }
    return session
  })

/** A JSON-RPC POST with exactly the given headers (Host included), answered with status and parsed body. */
export const rawMcpPost = (url: string, headers: Record<string, string>, message: unknown = {
  jsonrpc: "2.0",
  id: 1,
  method: "ping"
}) =>
  Effect.promise(() =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const body = JSON.stringify(message)
      const outgoing = request(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(body),
          ...headers
        }
      }, (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk) => (text += chunk))
        response.on("end", () => {
          let parsed: unknown
          try {
            parsed = JSON.parse(text)
          } catch {
            parsed = text
          }
          resolve({ status: response.statusCode ?? 0, body: parsed })
        })
      })
      outgoing.on("error", reject)
      outgoing.end(body)
    })
  )
