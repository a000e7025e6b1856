/**
 * Writes the audit log of every mutating request (POST, PUT, PATCH, DELETE; not the POSTs that only ask, such as
 * recall and reflect) on a bank's REST routes: who (the key's
 * fingerprint, `audit/AuditActor`), what (method, route template, operation, final status) and when. It is the
 * outermost middleware so that it sees the status the client sees (refusals of the browser guard, the key check and
 * text hygiene included); it never reads a body. The entry is written in the request's fiber once the response is
 * known and before it is sent, so an acknowledged change cannot lose its entry; a request that an invalid key made is
 * refused before it changes anything and is not attributed to anyone.
 */
import { Clock, Effect, Exit, Schema } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { actorOf } from "../audit/AuditActor.ts"
import { AuditLogs } from "../audit/AuditLogs.ts"
import { keyRingOf } from "../auth/KeyRing.ts"
import { EngramConfig } from "../config/EngramConfig.ts"
import { BankId } from "../domain/Bank.ts"
import type { ApiPaths } from "./RouteTemplates.ts"
import { decodedSegment } from "./TextHygiene.ts"

const mutating: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])
const bankRoute = "/v1/default/banks/{bank_id}"

/**
 * POST routes that only read: a question in a body is not a change. Recall in particular is answered from the bank's
 * brain without a statement; an audit row per recall would put a database write back on its path.
 */
const readOnlyPosts: ReadonlySet<string> = new Set([
  `${bankRoute}/memories/recall`,
  `${bankRoute}/reflect`,
  `${bankRoute}/memories/dry-run-extract`,
  `${bankRoute}/mental-models/{mental_model_id}/dry-run-refresh`,
  `${bankRoute}/brain/import/validate`,
  `${bankRoute}/graph/investigate`
])

/** The OpenAPI operation id of each route template and method ("memories.retain"), from the API's paths. */
export const makeOperationNames = (paths: ApiPaths) => {
  const names = new Map<string, string>()
  for (const [template, methods] of Object.entries(paths)) {
    for (const [method, { operationId }] of Object.entries(methods)) {
      if (operationId !== undefined) names.set(`${method.toUpperCase()} ${template}`, operationId)
    }
  }
  return (method: string, template: string) => names.get(`${method} ${template}`) ?? `${method} ${template}`
}

const isBankId = Schema.is(BankId)

const bankOf = (url: string) => {
  const segment = url.split("?")[0]!.split("/")[4] ?? ""
  return decodedSegment(segment) ?? segment
}

/** The status an interrupted request ends with (the client went away); nginx's name for it. */
const clientClosed = 499

export const auditTrailMiddleware = (
  routeOf: (method: string, url: string) => string,
  operationOf: (method: string, template: string) => string
) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const audit = yield* AuditLogs
      const keyRing = keyRingOf(yield* EngramConfig)
      return (httpEffect) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          if (!mutating.has(request.method)) return yield* httpEffect
          const route = routeOf(request.method, request.url)
          if (route !== bankRoute && !route.startsWith(`${bankRoute}/`)) return yield* httpEffect
          if (request.method === "POST" && readOnlyPosts.has(route)) return yield* httpEffect
          // Only a well-formed id can name a bank: anything else is refused inside and leaves nothing to attribute.
          const bankId = bankOf(request.url)
          const actor = actorOf(keyRing, request.headers["authorization"])
          if (actor === undefined || !isBankId(bankId)) return yield* httpEffect
          const startedAt = yield* Clock.currentTimeMillis
          return yield* Effect.onExit(httpEffect, (exit) =>
            Effect.flatMap(Clock.currentTimeMillis, (endedAt) =>
              audit.record({
                bankId,
                action: operationOf(request.method, route),
                transport: "http",
                method: request.method,
                route,
                // Failures were turned into responses by the JSON error layer inside; what escapes is an interruption.
                status: Exit.isSuccess(exit) ? exit.value.status : clientClosed,
                actor,
                startedAt: new Date(startedAt),
                endedAt: new Date(endedAt)
              })))
        })
    }),
    { global: true }
  )
