/**
 * What a web page in the user's browser must not do to a service it can reach (a loopback engram with no key is the
 * common case): every route answers only for allowed `Host` names (the DNS-rebinding guard the MCP endpoint had,
 * `mcp/RebindingGuard.ts`, now for REST too); a request that changes something (POST, PUT, PATCH, DELETE) is refused
 * when the browser says it is cross-site (`Sec-Fetch-Site`) or its `Origin` is not allowed; and its body must say
 * it is JSON (`Content-Type: application/json`) unless the route takes files (`multipart/form-data`) or raw bytes
 * (`application/octet-stream`, a `.brain` import). A browser sends a cross-site "simple" request with `text/plain`
 * or no type without asking first; before, such a body was parsed as JSON, so any page could plant memories that the
 * user's agent later recalled. Clients other than browsers send no `Origin` and are not affected.
 */
import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { EngramConfig } from "../config/EngramConfig.ts"
import { makeRebindingPolicy, rebindingViolation } from "../mcp/RebindingGuard.ts"

const changes = new Set(["POST", "PUT", "PATCH", "DELETE"])
const jsonType = /^\s*application\/([\w.+-]*\+)?json\s*(;|$)/i
const otherBodies = /^\s*(multipart\/form-data|application\/octet-stream)\s*(;|$)/i

const refuse = (status: number, detail: string) =>
  HttpServerResponse.jsonUnsafe({ detail, errors: [{ field: "headers", location: "header", message: detail }] }, {
    status
  })

const hasBody = (headers: Record<string, string | undefined>) =>
  (headers["content-length"] !== undefined && headers["content-length"] !== "0") ||
  headers["transfer-encoding"] !== undefined

export const browserGuardMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* EngramConfig
    const policy = makeRebindingPolicy({
      bindHost: config.host,
      allowedHosts: Option.getOrUndefined(config.mcpAllowedHosts),
      allowedOrigins: Option.getOrUndefined(config.mcpAllowedOrigins)
    })
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const headers = request.headers
        const violation = rebindingViolation(policy, {
          host: headers["host"],
          origin: changes.has(request.method) ? headers["origin"] : undefined
        })
        if (violation !== undefined) return refuse(403, violation)
        if (changes.has(request.method)) {
          if (headers["sec-fetch-site"] === "cross-site") {
            return refuse(403, "a cross-site request from a browser cannot change anything here")
          }
          const type = headers["content-type"] ?? ""
          if (hasBody(headers) && !jsonType.test(type) && !otherBodies.test(type)) {
            return refuse(415, `send the body as JSON with 'Content-Type: application/json' (got '${type || "none"}')`)
          }
        }
        return yield* httpEffect
      })
  }),
  { global: true }
)
