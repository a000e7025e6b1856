/**
 * Answers one MCP Streamable HTTP request with the SDK: stateless (no session id) and with JSON responses, so every
 * POST is self-contained and any process of the service can answer it. As the SDK advises for stateless servers,
 * each request gets a fresh protocol server and transport (cheap: the tool catalog is compiled once). Tool calls
 * run as Effects in the context of the HTTP request that carried them. It knows nothing of routes or auth.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import {
  type CallToolRequest,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  RequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import { Effect } from "effect"
import type { BankResolver, ToolCatalog } from "./ToolCatalog.ts"

export interface McpEndpointOptions {
  readonly catalog: ToolCatalog
  /** What the assistant is told at initialize: which bank(s) it works in and how to use the tools. */
  readonly instructions: string
  readonly resolveBank: BankResolver
  readonly version: string
  readonly maxRequestBytes: number
  /** Shared by every request's server; the tools never ask the client for input, so it is never exercised. */
  readonly validator: jsonSchemaValidator
}

/**
 * `tools/call` with any params object. The SDK parses a request with the handler's schema before its own
 * validation of `tools/call` runs, and answers that parse's failure (e.g. `arguments: []`, `name: 42`) as a
 * JSON-RPC *internal* error (-32603) with a zod dump; with this schema the SDK's validation answers it instead,
 * as invalid params (-32602) naming the field.
 */
const AnyToolCall = CallToolRequestSchema.extend({ params: RequestSchema.shape.params })

type Runner = <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Promise<A>

const makeServer = (options: McpEndpointOptions, run: Runner) => {
  // The low-level `Server`: the high-level `McpServer` wants zod schemas, while our tools carry JSON Schemas derived
  // from the Effect Schemas the REST API uses.
  const server = new Server(
    { name: "engram", title: "engram memory", version: options.version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: options.instructions,
      jsonSchemaValidator: options.validator
    }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...options.catalog.tools] }))
  server.setRequestHandler(AnyToolCall, (request, extra) => {
    // The SDK has validated the params against CallToolRequestSchema before calling this handler.
    const { name, arguments: args } = (request as CallToolRequest).params
    if (!options.catalog.has(name)) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${name}': tools/list shows the tools of this endpoint`)
    }
    return run(options.catalog.call(name, args, options.resolveBank), extra.signal)
  })
  return server
}

export const handleMcpRequest = (request: Request, options: McpEndpointOptions): Effect.Effect<Response> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<never>()
    const run = <A>(effect: Effect.Effect<A>, signal: AbortSignal) => Effect.runPromiseWith(context)(effect, { signal })
    const transport = new WebStandardStreamableHTTPServerTransport({
      // No `sessionIdGenerator`: stateless, no Mcp-Session-Id.
      enableJsonResponse: true,
      maxRequestBodySize: options.maxRequestBytes
    })
    return yield* Effect.acquireUseRelease(
      Effect.promise(() => {
        const server = makeServer(options, run)
        return server.connect(transport).then(() => server)
      }),
      () => Effect.promise(() => transport.handleRequest(request)),
      (server) => Effect.promise(() => server.close())
    )
  })
