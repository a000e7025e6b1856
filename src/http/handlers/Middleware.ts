/**
 * Implementations of the REST middleware: request decoding failures become a 400 that names every
 * offending field; with the `api_key` tenant extension every route but /health and /version needs a key (`auth/KeyRing`),
 * and the banks it reaches are the request's `CurrentBankAccess`.
 */
import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { CurrentBankAccess } from "../../auth/BankAccess.ts"
import { keyRingOf } from "../../auth/KeyRing.ts"
import { EngramConfig } from "../../config/EngramConfig.ts"
import type { IssueLocation } from "../../domain/Errors.ts"
import { Unauthorized, ValidationError } from "../../domain/Errors.ts"
import { ApiKeyAuth, RequestValidation } from "../api/Middleware.ts"

const locations: Record<HttpApiError.HttpApiSchemaError["kind"], IssueLocation> = {
  Params: "path",
  Headers: "header",
  Query: "query",
  Payload: "body",
  Body: "body",
  ResponseHeaders: "header"
}

export const RequestValidationLive = Layer.succeed(RequestValidation)((httpEffect) =>
  Effect.mapError(
    httpEffect,
    (error) =>
      HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders"
        ? ValidationError.fromSchemaError(error.cause, locations[error.kind])
        : error
  )
)

/** Endpoints that answer without a key, so load balancers and clients can probe the service. */
const publicEndpoints: ReadonlySet<string> = new Set(["health", "version"])

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.gen(function*() {
    const keyRing = keyRingOf(yield* EngramConfig)
    if (keyRing === undefined) return ApiKeyAuth.of((httpEffect) => httpEffect)
    return ApiKeyAuth.of((httpEffect, { endpoint }) =>
      publicEndpoints.has(endpoint.identifier) ? httpEffect : Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const access = keyRing.accessOf(request.headers["authorization"])
        if (access === undefined) {
          return yield* new Unauthorized({ detail: "missing or invalid API key: send 'Authorization: Bearer <key>'" })
        }
        return yield* Effect.provideService(httpEffect, CurrentBankAccess, access)
      })
    )
  })
)
