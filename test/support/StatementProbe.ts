/**
 * Counts the SQL statements run on behalf of one HTTP request: a statement transformer in the in-process server
 * records each statement whose fiber serves a request carrying the probe header, keyed by the header's value, so
 * background work (catch-ups, telemetry, consolidation) cannot blur the count. Provide `recordStatements` to the
 * app layer, then `probe` a request.
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { Statement } from "effect/sql"
import { TestServer } from "./TestServer.ts"

const probeHeader = "x-statement-probe"

export interface RecordedStatement {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
}

/** Statements run on behalf of each probed request, by the value of its probe header. */
const recorded = new Map<string, Array<RecordedStatement>>()

export const recordStatements = Layer.succeed(Statement.CurrentTransformer, (statement, _sql, fiber) => {
  const request = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)
  const probe = Option.isSome(request) ? request.value.headers[probeHeader] : undefined
  if (probe !== undefined) {
    const [sql, params] = statement.compile()
    recorded.set(probe, [...(recorded.get(probe) ?? []), { sql, params }])
  }
  return Effect.succeed(statement)
})

let probes = 0

/** One request over HTTP, its answer and the statements it ran. */
export const probe = (method: string, path: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const id = `probe-${++probes}`
    const response = yield* server.request(method, path, {
      headers: { [probeHeader]: id },
      ...(json === undefined ? {} : { json })
    })
    return { response, body: response.body, statements: recorded.get(id) ?? [] }
  })
