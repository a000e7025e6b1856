/**
 * The MCP tool endpoint as routes of the service's one HTTP server: `/mcp` and `/mcp/` (multi-bank, 32 tools) and
 * `/mcp/{bank_id}` and `/mcp/{bank_id}/` (single-bank, 29 tools). Before the protocol runs, each request passes the
 * DNS-rebinding guard (403), the API key when the `api_key` tenant extension is on (401) and the bank id checks
 * (400); only POST carries the stateless protocol (GET and DELETE answer 405). With SERVICE_API_MCP_ENABLED=false
 * no route is added, so the paths answer 404.
 */
import { Effect, Layer, Option, Result, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { EngramConfig, InvalidConfiguration } from "../../src/config/EngramConfig.ts"
import { BankId } from "../../src/domain/Bank.ts"
import { ValidationError } from "../../src/domain/Errors.ts"
import { apiVersion } from "../../src/http/handlers/MonitoringHandlers.ts"
import { CurrentBankAccess, everyBank } from "../../src/auth/BankAccess.ts"
import { keyRingOf } from "../../src/auth/KeyRing.ts"
import { McpTools } from "../../src/mcp/McpTools.ts"
import { makeRebindingPolicy, rebindingViolation } from "../../src/mcp/RebindingGuard.ts"
import type { McpMode } from "../../src/mcp/ToolCatalog.ts"

/** The MCP paths as route templates (trailing slash ignored), so metrics are labelled by route, not by bank id. */
export const mcpRouteTemplates: Record<string, Record<string, unknown>> = {
  "/mcp/": { post: {}, get: {}, delete: {} },
  "/mcp/{bank_id}/": { post: {}, get: {}, delete: {} }
}

const usage = "Call `recall` before answering anything that may depend on earlier conversations or stored facts; " +
  "call `retain` to store new facts, preferences, decisions and events worth remembering; call `reflect` for " +
  "answers that need reasoning over many memories."

const refuse = (status: number, detail: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ detail }, { status, headers })

const decodeBankId = Schema.decodeUnknownResult(BankId)

/**
 * The MCP SDK with zod and ajv, loaded by the first MCP request rather than at start: 11 MiB of heap (2 MiB of it
 * source text) that a server nobody talks MCP to never uses.
 */
const loadEndpoint = Effect.promise(async () => {
  const [{ handleMcpRequest }, { AjvJsonSchemaValidator }] = await Promise.all([
    import("../../src/mcp/McpEndpoint.ts"),
    import("@modelcontextprotocol/sdk/validation/ajv")
  ])
  return { handleMcpRequest, validator: new AjvJsonSchemaValidator() }
})

/** The bank id's problem in the words of the REST API's 400s, or `undefined` when it is valid. */
const bankIdProblem = (value: string, field: string) =>
  Result.match(decodeBankId(value), {
    onSuccess: () => undefined,
    onFailure: (error) => `${field}: ${ValidationError.fromSchemaError(error, "path").errors[0]?.message ?? "invalid"}`
  })

const McpRoutesLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const config = yield* EngramConfig
    const tools = yield* McpTools
    const defaultProblem = bankIdProblem(config.mcpDefaultBankId, "SERVICE_MCP_BANK_ID")
    if (defaultProblem !== undefined) return yield* new InvalidConfiguration({ message: defaultProblem })
    const policy = makeRebindingPolicy({
      bindHost: config.host,
      allowedHosts: Option.getOrUndefined(config.mcpAllowedHosts),
      allowedOrigins: Option.getOrUndefined(config.mcpAllowedOrigins)
    })
    const keyRing = keyRingOf(config)
    const endpoint = yield* Effect.cached(loadEndpoint)

    const handler = (mode: McpMode) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const headers = request.headers
        const violation = rebindingViolation(policy, { host: headers["host"], origin: headers["origin"] })
        if (violation !== undefined) return refuse(403, violation)
        const access = keyRing === undefined ? everyBank : keyRing.accessOf(headers["authorization"])
        if (access === undefined) {
          return refuse(401, "missing or invalid API key: send 'Authorization: Bearer <key>'", {
            "www-authenticate": "Bearer"
          })
        }
        if (request.method !== "POST") {
          return refuse(405, "the MCP endpoint is stateless: send JSON-RPC requests with POST", { allow: "POST" })
        }
        const pathBank = mode === "single" ? (yield* HttpRouter.params)["bank_id"] ?? "" : undefined
        const headerBank = headers["x-bank-id"]?.trim() || undefined
        const problem = (pathBank === undefined ? undefined : bankIdProblem(pathBank, "bank_id")) ??
          (headerBank === undefined || pathBank !== undefined ? undefined : bankIdProblem(headerBank, "X-Bank-Id"))
        if (problem !== undefined) return refuse(400, problem)

        const defaultBank = pathBank ?? headerBank ?? config.mcpDefaultBankId
        // A key that does not reach the endpoint's bank gets nothing from it; tools naming other banks are checked
        // per call (`mcp/ToolCatalog`).
        if ((pathBank !== undefined || headerBank !== undefined) && !access.reaches(defaultBank)) {
          return refuse(403, `bank_id: this API key does not reach bank '${defaultBank}'`)
        }
        const web = yield* HttpServerRequest.toWeb(request)
        const { handleMcpRequest, validator } = yield* endpoint
        const response = yield* handleMcpRequest(web, {
          catalog: mode === "multi" ? tools.multiBank : tools.singleBank,
          resolveBank: (argument) => argument ?? defaultBank,
          instructions: mode === "multi"
            ? `engram memory service. Each tool works in the bank named by its optional \`bank_id\` argument, ` +
              `otherwise in '${defaultBank}'; \`list_banks\` shows the banks. ${usage}`
            : `engram memory bank '${defaultBank}': every tool works in this bank. ${usage}`,
          version: apiVersion,
          maxRequestBytes: config.maxRequestBytes,
          validator
        }).pipe(Effect.provideService(CurrentBankAccess, access))
        return HttpServerResponse.fromWeb(response)
      }).pipe(Effect.catchTag("RequestParseError", () => Effect.succeed(refuse(400, "the request could not be read"))))

    // The router ignores a trailing slash, so these also serve `/mcp/` and `/mcp/{bank_id}/`.
    yield* router.add("*", "/mcp", handler("multi"))
    yield* router.add("*", "/mcp/:bank_id", handler("single"))
  })
)

/** The MCP routes, or none when SERVICE_API_MCP_ENABLED=false. */
export const McpLive = Layer.unwrap(
  Effect.map(
    EngramConfig,
    (config) => config.mcpEnabled ? McpRoutesLive.pipe(Layer.provide(McpTools.layer)) : Layer.empty
  )
)
