/**
 * With an API key configured, the key is checked first — before any other middleware reads, decodes or walks a
 * request's body: an unauthenticated 25 MB JSON body used to be parsed and walked by text hygiene (1.9 s of the event
 * loop) before the route's own key check refused it. Every route needs the key but the probes (`/health`, its `live`
 * and `ready` forms, `/version`) and the web UI's static files (the UI asks for the key and sends it with every API
 * call); `/docs` and `/openapi.json` need it too. The routes' own checks (REST, MCP) stay as a second line.
 *
 * A key of SERVICE_API_TENANT_API_KEYS reaches only its banks: a bank named by the path (`/v1/default/banks/{id}`,
 * `/mcp/{id}`, MCP's `X-Bank-Id`) outside them is refused here with 403, the admin routes and `/metrics` need a key
 * that reaches every bank, and the handlers that name banks elsewhere (the bank list, chunks by id, repos, MCP tool
 * arguments) read the request's `CurrentBankAccess` set here.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type BankAccess, CurrentBankAccess } from "../auth/BankAccess.ts"
import { keyRingOf } from "../auth/KeyRing.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { decodedSegment } from "./TextHygiene.ts"

const publicPaths = /^\/(health(\/(live|ready))?|version|ui(\/.*)?|favicon\.ico)?$/
/** The bank a path names: `/v1/default/banks/{id}/…` or `/mcp/{id}` (the segment as sent, not decoded). */
export const bankInPath = /^\/(?:v1\/default\/banks|mcp)\/([^/]+)/
const everyBankPaths = /^\/(v1\/admin(\/.*)?|metrics)$/

const refuse = (status: 401 | 403, tag: string, detail: string) =>
  HttpServerResponse.jsonUnsafe(
    { _tag: tag, detail },
    { status, ...(status === 401 ? { headers: { "www-authenticate": "Bearer" } } : {}) }
  )

/** Why `access` may not use `path` (with the request's `X-Bank-Id`), or undefined when it may. */
const outOfReach = (access: BankAccess, path: string, headerBank: string | undefined): string | undefined => {
  if (access.everyBank) return undefined
  if (everyBankPaths.test(path)) return "this route needs an API key that reaches every bank"
  const pathBank = path.match(bankInPath)?.[1]
  const bank = pathBank !== undefined
    ? decodedSegment(pathBank) ?? pathBank
    : path === "/mcp" || path === "/mcp/"
    ? headerBank
    : undefined
  if (bank !== undefined && !access.reaches(bank)) return `bank_id: this API key does not reach bank '${bank}'`
  return undefined
}

export const authFirstMiddleware = HttpRouter.middleware(
  Effect.gen(function*() {
    const keyRing = keyRingOf(yield* EngramConfig)
    if (keyRing === undefined) return (httpEffect) => httpEffect
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? ""
        if (publicPaths.test(path)) return yield* httpEffect
        const access = keyRing.accessOf(request.headers["authorization"])
        if (access === undefined) {
          return refuse(401, "Unauthorized", "missing or invalid API key: send 'Authorization: Bearer <key>'")
        }
        const refusal = outOfReach(access, path, request.headers["x-bank-id"]?.trim() || undefined)
        if (refusal !== undefined) return refuse(403, "Forbidden", refusal)
        return yield* Effect.provideService(httpEffect, CurrentBankAccess, access)
      })
  }),
  { global: true }
)
