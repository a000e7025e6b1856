/**
 * The published Hindsight client (`@vectorize-io/hindsight-client` 0.9.1) finds every one of its operations here:
 * each function of its SDK names a method and path that the OpenAPI document serves, and calling it through the
 * client itself (with placeholder ids and no body) answers JSON without a server error — a 4xx naming what is
 * missing or unknown at worst, never a route the server does not have. The behaviour of each operation is tested
 * with its feature (bank templates, audit logs, knowledge base, documents and memories operations, 0.9 fields).
 */
import { assert, layer } from "@effect/vitest"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { Effect } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

interface ClientOperation {
  readonly name: string
  readonly method: string
  readonly path: string
}

/** The method and path template of each SDK function, read from the function itself (the client has no table). */
const operations: ReadonlyArray<ClientOperation> = Object.entries(sdk).flatMap(([name, operation]) => {
  const source = String(operation)
  const method = source.match(/\.(get|post|put|patch|delete)\(/)?.[1]
  const path = source.match(/url: "([^"]+)"/)?.[1]
  return method === undefined || path === undefined ? [] : [{ name, method: method.toUpperCase(), path }]
})

const template = (path: string) => path.replace(/\{[^}]+\}/g, "{}")

layer(testApp(), { excludeTestServices: true })("the published Hindsight client's surface", (it) => {
  it.effect("every operation of the 0.9.1 client is a route of the OpenAPI document and answers without a 5xx", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      assert.isAtLeast(operations.length, 79, "every SDK function names its method and path")
      const openapi = (yield* server.request("GET", "/openapi.json")).body
      const served = new Set(
        Object.entries(openapi.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
          Object.keys(methods).map((method) => `${method.toUpperCase()} ${template(path)}`)
        )
      )
      // The probes are served outside the API document.
      const probes = new Set(["GET /health", "GET /health/live", "GET /health/ready", "GET /version", "GET /metrics"])
      const missing = operations.filter((op) =>
        !probes.has(`${op.method} ${op.path}`) && !served.has(`${op.method} ${template(op.path)}`)
      )
      assert.deepStrictEqual(missing.map((op) => `${op.name}: ${op.method} ${op.path}`), [])

      yield* server.request("PUT", "/v1/default/banks/client-surface", { json: {} })
      const client = createClient(createConfig({ baseUrl: server.url }))
      const failures: Array<string> = []
      for (const op of operations) {
        const ids = Object.fromEntries(
          [...op.path.matchAll(/\{([^}]+)\}/g)].map((
            [, id]
          ) => [id!, id === "bank_id" ? "client-surface" : "no-such-id"])
        )
        const call = (sdk as unknown as Record<string, (options: object) => Promise<{ response: Response }>>)[op.name]!
        const outcome = yield* Effect.promise(() =>
          call({ client, path: ids, body: op.method === "GET" || op.method === "DELETE" ? undefined : {} })
            .then(({ response }) => ({ status: response.status, type: response.headers.get("content-type") ?? "" }))
            .catch((error: unknown) => ({ status: 0, type: String(error) }))
        )
        if (outcome.status === 0 || outcome.status >= 500 || outcome.status === 405) {
          failures.push(`${op.name}: ${op.method} ${op.path} → ${outcome.status} ${outcome.type}`)
        }
      }
      assert.deepStrictEqual(failures, [])
    }))
})
