/**
 * Middleware contracts applied to every REST endpoint: request validation errors rendered as 400 JSON that
 * names each field, and the optional API-key check. Their implementations live in `src/http/handlers`.
 */
import { HttpApiMiddleware } from "effect/http-api"
import { Unauthorized, ValidationError } from "../../domain/Errors.ts"

export class RequestValidation extends HttpApiMiddleware.Service<RequestValidation>()("engram/http/RequestValidation", {
  error: ValidationError
}) {}

export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth>()("engram/http/ApiKeyAuth", {
  error: Unauthorized
}) {}
