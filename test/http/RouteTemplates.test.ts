/**
 * Route templates and operation names come from the API's definition (`apiPaths`), not from its OpenAPI document,
 * which is not built at start: they must be the document's own, for every route, or the audit trail and span
 * names would name operations that `/openapi.json` does not.
 */
import { describe, expect, it } from "vitest"
import { OpenApi } from "effect/http-api"
import { EngramApi } from "../../src/http/api/Api.ts"
import { apiPaths, makeRouteTemplates } from "../../src/http/RouteTemplates.ts"

describe("apiPaths", () => {
  it("names every route, method and operation id as the OpenAPI document does", () => {
    const document = OpenApi.fromApi(EngramApi).paths as Record<string, Record<string, { operationId?: string }>>
    const fromDocument = Object.entries(document).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method} ${template} ${operation.operationId}`)
    )
    const fromDefinition = Object.entries(apiPaths(EngramApi)).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method} ${template} ${operation.operationId}`)
    )
    expect(fromDocument.length).toBeGreaterThan(130)
    expect(fromDefinition.sort()).toEqual(fromDocument.sort())
  })

  it("maps a concrete path back to its template", () => {
    const routeOf = makeRouteTemplates(apiPaths(EngramApi))
    expect(routeOf("GET", "/v1/default/banks/alpha/memories/list")).toBe("/v1/default/banks/{bank_id}/memories/list")
    expect(routeOf("DELETE", "/nowhere")).toBe("unmatched")
  })
})
