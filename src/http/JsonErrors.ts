/**
 * The outermost HTTP layer: unknown routes answer 404 JSON, unexpected failures answer 500 JSON without
 * internals, and any error response that would go out without a JSON body (none, or plain text) gets
 * `{"detail": ...}` — existing clients read `detail` and treat a body-less error as a protocol failure. It also
 * records request metrics.
 */
import { Cause, Clock, Effect, Metric } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"

const requests = Metric.counter("engram_http_requests_total", {
  description: "HTTP requests by method, route and status"
})
const durations = Metric.histogram("engram_http_request_duration_seconds", {
  description: "HTTP request durations by method and route",
  boundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
})

const reasons: Record<number, string> = {
  400: "bad request",
  401: "unauthorized",
  403: "forbidden",
  404: "not found",
  405: "method not allowed",
  408: "request timeout",
  413: "request body too large",
  415: "unsupported media type",
  500: "internal server error",
  503: "service unavailable"
}

const errorBody = (status: number, detail: string) => HttpServerResponse.jsonUnsafe({ detail }, { status })

/**
 * The `detail` for an error response that does not carry a JSON body: none (an empty body), or plain text such as
 * the HttpApi's own 415 "Unsupported content-type: text/plain", which is kept as the detail because it names the
 * header and the value at fault. `undefined` when the body is JSON already.
 */
const missingDetail = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  const body = response.body
  if (body._tag === "Empty") return reasons[response.status] ?? "request failed"
  if (body._tag !== "Uint8Array" || body.contentType.includes("json")) return undefined
  const text = body.contentType.startsWith("text/") ? new TextDecoder().decode(body.body).trim() : ""
  return text === "" ? reasons[response.status] ?? "request failed" : text.slice(0, 500)
}

export const jsonErrorsMiddleware = (routeOf: (method: string, url: string) => string) =>
  HttpRouter.middleware((httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = yield* Clock.currentTimeNanos
      const response = yield* httpEffect.pipe(
        Effect.catchCause((cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
          // Body parse failures surface as failures or, inside HttpApi decoding, as defects: look at both.
          const error = Cause.squash(cause)
          if (HttpServerError.isHttpServerError(error)) {
            const reason = error.reason
            if (reason._tag === "RouteNotFound") {
              return Effect.succeed(errorBody(404, `no route for ${request.method} ${request.url.split("?")[0]}`))
            }
            if (reason._tag === "RequestParseError") {
              return Effect.succeed(
                reason.reason === "BodyTooLarge"
                  ? errorBody(413, "request body too large")
                  : errorBody(400, "the request body could not be read")
              )
            }
          }
          // A malformed multipart body (file retain) surfaces as a defect of the handler's payload decoding.
          if (Multipart.isMultipartError(error) && error.reason._tag !== "InternalError") {
            return Effect.succeed(
              error.reason._tag === "Parse"
                ? errorBody(400, "body: the multipart/form-data body could not be parsed")
                : errorBody(413, `body: multipart/form-data ${error.reason._tag}`)
            )
          }
          return Effect.logError("request failed", cause).pipe(Effect.as(errorBody(500, reasons[500]!)))
        }),
        Effect.map((response) => {
          const detail = response.status >= 400 ? missingDetail(response) : undefined
          // The response's own headers (Allow, WWW-Authenticate, ...) stay; only the body becomes JSON.
          return detail === undefined
            ? response
            : HttpServerResponse.jsonUnsafe({ detail }, { status: response.status, headers: response.headers })
        })
      )
      const route = routeOf(request.method, request.url)
      const attributes = { method: request.method, route, status: String(response.status) }
      yield* Metric.update(Metric.withAttributes(requests, attributes), 1)
      yield* Metric.update(
        Metric.withAttributes(durations, { method: request.method, route }),
        Number((yield* Clock.currentTimeNanos) - started) / 1e9
      )
      return response
    }), { global: true })
