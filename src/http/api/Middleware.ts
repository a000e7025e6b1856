/**
 * Middleware contracts applied to every REST endpoint: request validation errors rendered as 400 JSON that
 * names each field, and the optional API-key check. Their implementations live in `src/http/handlers`.
 */
import { HttpApiMiddleware } from "effect/http-api"
import { Forbidden, Unauthorized, ValidationError } from "../../domain/Errors.ts"

export class RequestValidation extends HttpApiMiddleware.Service<RequestValidation>()("engram/http/RequestValidation", {
  error: ValidationError
}) {}

export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth>()("engram/http/ApiKeyAuth", {
  // Forbidden: handlers that name a bank outside the path (`auth/BankAccess`) refuse keys that do not reach it.
  error: [Unauthorized, Forbidden]
}) {}
