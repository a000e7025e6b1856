/**
 * With an API key configured, the key is checked first — before any other middleware reads, decodes or walks a
 * request's body: an unauthenticated 25 MB JSON body used to be parsed and walked by text hygiene (1.9 s of the event
 * loop) before the route's own key check refused it. Every route needs the key but the probes (`/health`, its `live`
 * and `ready` forms, `/version`) and the web UI's static files (the UI asks for the key and sends it with every API
 * call); `/docs` and `/openapi.json` need it too. The routes' own checks (REST, MCP) stay as a second line.
 */
import { Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { EngramConfig } from "../config/EngramConfig.ts"
import { makeKeyCheck } from "./handlers/Middleware.ts"

const publicPaths = /^\/(health(\/(live|ready))?|version|ui(\/.*)?|favicon\.ico)?$/

export const authFirstMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* EngramConfig
    if (config.tenantExtension !== "api_key" || Option.isNone(config.tenantApiKey)) {
      return (httpEffect) => httpEffect
    }
    const check = makeKeyCheck(config.tenantApiKey.value)
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? ""
        if (publicPaths.test(path) || check(request.headers["authorization"])) return yield* httpEffect
        return HttpServerResponse.jsonUnsafe(
          { _tag: "Unauthorized", detail: "missing or invalid API key: send 'Authorization: Bearer <key>'" },
          { status: 401, headers: { "www-authenticate": "Bearer" } }
        )
      })
  }),
  { global: true }
)
