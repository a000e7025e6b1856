/**
 * Implementations of the REST middleware: request decoding failures become a 400 that names every
 * offending field; with the `api_key` tenant extension every route but /health and /version needs the key.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { createHash, timingSafeEqual } from "node:crypto"
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
  Effect.mapError(httpEffect, (error) =>
    HttpApiError.HttpApiSchemaError.is(error) && error.kind !== "Body" && error.kind !== "ResponseHeaders"
      ? ValidationError.fromSchemaError(error.cause, locations[error.kind])
      : error)
)

/** Endpoints that answer without a key, so load balancers and clients can probe the service. */
const publicEndpoints: ReadonlySet<string> = new Set(["health", "version"])

const digest = (value: string) => createHash("sha256").update(value).digest()

/** Compares digests in constant time so the key cannot be guessed byte by byte from response timings. */
export const makeKeyCheck = (expected: Redacted.Redacted<string>) => {
  const expectedDigest = digest(Redacted.value(expected))
  return (authorization: string | undefined): boolean => {
    const match = authorization?.match(/^Bearer\s+(.+)$/i)
    return match?.[1] !== undefined && timingSafeEqual(digest(match[1].trim()), expectedDigest)
  }
}

export const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.gen(function*() {
    const config = yield* EngramConfig
    if (config.tenantExtension !== "api_key" || Option.isNone(config.tenantApiKey)) {
      return ApiKeyAuth.of((httpEffect) => httpEffect)
    }
    const check = makeKeyCheck(config.tenantApiKey.value)
    return ApiKeyAuth.of((httpEffect, { endpoint }) =>
      publicEndpoints.has(endpoint.identifier) ? httpEffect : Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!check(request.headers["authorization"])) {
          return yield* new Unauthorized({ detail: "missing or invalid API key: send 'Authorization: Bearer <key>'" })
        }
        return yield* httpEffect
      })
    )
  })
)
