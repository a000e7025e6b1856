/**
 * Maps a concrete request path back to the route template it matched ("/v1/default/banks/{bank_id}"), so
 * metrics are labelled by route and not by every bank id a client ever used.
 */
import { Context } from "effect"
import { FindMyWay } from "effect/http"
import { HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"

/** Route templates by method, each with its OpenAPI operation id: the shape of an OpenAPI document's `paths`. */
export type ApiPaths = Record<string, Record<string, { readonly operationId?: string }>>

/**
 * An API's `paths` as its OpenAPI document names them (`/v1/default/banks/{bank_id}`, lower-case methods, the
 * operation ids `OpenApi.fromApi` gives), read from the API's definition alone. `OpenApi.fromApi` builds every
 * JSON schema of the document as well: 275 ms of CPU at every start for the two maps below, which need none of them
 * (`/openapi.json` still builds the document, when it is first asked for). A test holds the two equal.
 */
export const apiPaths = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ApiPaths => {
  const paths: Record<string, Record<string, { readonly operationId: string }>> = {}
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const template = endpoint.path.replace(/:(\w+)/g, "{$1}")
      const operationId = Context.getOrElse(
        endpoint.annotations,
        OpenApi.Identifier,
        () => group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`
      )
      ;(paths[template] ??= {})[endpoint.method.toLowerCase()] = { operationId }
    }
  })
  return paths
}

export const makeRouteTemplates = (paths: Record<string, Record<string, unknown>>) => {
  const router = FindMyWay.make<string>()
  for (const [template, methods] of Object.entries(paths)) {
    const pattern = template.replace(/\{([^}]+)\}/g, ":$1")
    for (const method of Object.keys(methods)) {
      if (["get", "put", "post", "patch", "delete"].includes(method)) {
        router.on(method.toUpperCase() as "GET", pattern as "/", template)
      }
    }
  }
  return (method: string, url: string): string => router.find(method, url)?.handler ?? "unmatched"
}
