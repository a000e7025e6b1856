/**
 * Maps a concrete request path back to the route template it matched ("/v1/default/banks/{bank_id}"), so
 * metrics are labelled by route and not by every bank id a client ever used.
 */
import { FindMyWay } from "effect/http"

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
