/**
 * Every view of a bank's state surface, as text keyed by what was read: graph intelligence (all nodes and entities
 * only), the state summary and neighbourhood (no window, no confidence floor, so every node is kept), an
 * investigation per question, and the MCP `graph_intelligence` and `investigate_graph` tools (the server must expose
 * the `graph` tool family). What the forgetting tests search for content that must be gone.
 */
import { Effect } from "effect"
import { bankPath, ok } from "./HttpCalls.ts"
import { connectMcp } from "./McpClient.ts"
import { TestServer } from "./TestServer.ts"

export const stateSurfaceViews = (bank: string, questions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const base = bankPath(bank)
    const all = "window_days=0&confidence_min=0"
    const texts: Record<string, string> = {}
    for (
      const view of [
        `graph/intelligence?${all}&limit=100`,
        `graph/intelligence?${all}&node_kind=entity&limit=100`,
        `graph/summary?surface=state&${all}`,
        `graph/neighborhood?surface=state&${all}&depth=3&limit_nodes=120`
      ]
    ) {
      texts[view] = (yield* ok("GET", `${base}/${view}`)).text
    }
    for (const query of questions) {
      texts[`investigate ${query}`] = (yield* ok("POST", `${base}/graph/investigate`, {
        query,
        window_days: 0,
        confidence_min: 0
      })).text
    }
    const server = yield* TestServer
    const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
    texts["mcp graph_intelligence"] = JSON.stringify(
      yield* mcp.ok("graph_intelligence", { window_days: 0, confidence_min: 0, limit: 100 })
    )
    for (const query of questions) {
      texts[`mcp investigate_graph ${query}`] = JSON.stringify(
        yield* mcp.ok("investigate_graph", { query, window_days: 0 })
      )
    }
    return texts
  })
