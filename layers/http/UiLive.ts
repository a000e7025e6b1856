/**
 * The web control plane at /ui, served by the same process as the API: the static files Vite builds into `ui/dist`
 * (at `npm install`, through the package's `prepare` script) with a single-page fallback for client-side routes.
 * The files hold no secret, so they load without the API key; every API call the page makes sends the key itself.
 * When the build is missing, /ui answers 503 saying how to build it rather than failing.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { contentTypeOf, resolveAsset } from "../../src/http/ui/StaticAssets.ts"

/**
 * `ui/dist` of this checkout, wherever the process was started from: two folders up from this file's sources, three
 * from its compiled copy in `dist/layers/http/`.
 */
export const defaultUiRoot = fileURLToPath(
  new URL(import.meta.url.endsWith(".ts") ? "../../ui/dist" : "../../../ui/dist", import.meta.url)
)

const notBuilt = "the web UI is not built: run `npm run build:ui` (npm install runs it through the `prepare` script)"

// The page talks only to this origin and loads nothing from elsewhere (no CDN): a stray remote load fails loudly.
const pageHeaders = {
  "content-security-policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; " +
    "connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const detail = (status: number, message: string) => HttpServerResponse.jsonUnsafe({ detail: message }, { status })

/** The file's bytes, or `undefined` when it does not exist (any other read failure is a defect). */
const readOptional = (path: string) =>
  Effect.tryPromise({ try: () => readFile(path), catch: (error) => error }).pipe(
    Effect.map((bytes): Uint8Array | undefined => bytes),
    Effect.catch((error) =>
      (error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR"
        ? Effect.succeed(undefined)
        : Effect.die(error)
    )
  )

export const uiRoutes = (root: string) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const handler = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = request.url.split("?")[0] ?? "/ui"
        const target = resolveAsset(root, path)
        if (target._tag === "Invalid") return detail(400, `path: ${target.reason}`)
        if (target._tag === "Page") {
          const page = yield* readOptional(join(root, "index.html"))
          if (page === undefined) return detail(503, notBuilt)
          return HttpServerResponse.uint8Array(page, {
            contentType: contentTypeOf("index.html"),
            headers: { ...pageHeaders, "cache-control": "no-cache" }
          })
        }
        const bytes = yield* readOptional(target.path)
        if (bytes === undefined) return detail(404, `no UI file at ${path}`)
        return HttpServerResponse.uint8Array(bytes, {
          contentType: contentTypeOf(target.path),
          headers: {
            "x-content-type-options": "nosniff",
            "cache-control": target.immutable ? "public, max-age=31536000, immutable" : "no-cache"
          }
        })
      })
      // The wildcard route also matches `/ui` and `/ui/` (the router ignores a trailing slash).
      yield* router.add("GET", "/ui/*", handler)
    })
  )

export const UiLive = uiRoutes(defaultUiRoot)
