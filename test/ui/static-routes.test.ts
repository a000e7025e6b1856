/** The web UI's static route over a real socket: content types, SPA fallback, caching, refusals, auth, no build. */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { uiRoutes } from "../../layers/http/UiLive.ts"
import { resolveAsset } from "../../src/http/ui/StaticAssets.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { ensureUiBuilt } from "./UiBrowser.ts"

const key = "ui-static-test-key"
const app = testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)) })

layer(app, { excludeTestServices: true })("web UI static files", (it) => {
  it.effect("the page, its client routes and its hashed assets are served with their content types", () =>
    Effect.gen(function*() {
      yield* ensureUiBuilt
      const server = yield* TestServer
      for (const path of ["/ui", "/ui/", "/ui/banks/some-bank/recall", "/ui/banks/b/graph?surface=state"]) {
        const page = yield* server.request("GET", path)
        assert.strictEqual(page.status, 200, path)
        assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
        assert.include(page.text, `<div id="app">`)
        assert.include(page.headers.get("content-security-policy") ?? "", "default-src 'self'")
        assert.strictEqual(page.headers.get("cache-control"), "no-cache")
      }
      const page = yield* server.request("GET", "/ui/")
      const script = page.text.match(/src="(\/ui\/assets\/[^"]+\.js)"/)?.[1]
      const style = page.text.match(/href="(\/ui\/assets\/[^"]+\.css)"/)?.[1]
      assert.isString(script)
      assert.isString(style)
      const js = yield* server.request("GET", script!)
      assert.strictEqual(js.status, 200)
      assert.strictEqual(js.headers.get("content-type"), "text/javascript; charset=utf-8")
      assert.strictEqual(js.headers.get("cache-control"), "public, max-age=31536000, immutable")
      // Nothing is fetched from another origin at run time: no absolute URL to a CDN in the bundle's imports.
      assert.notMatch(js.text, /import\s*["'(]\s*["']?https?:/)
      const css = yield* server.request("GET", style!)
      assert.strictEqual(css.headers.get("content-type"), "text/css; charset=utf-8")
    }))

  it.effect("a missing asset is a 404 and a path leaving the UI directory a 400, both with a detail", () =>
    Effect.gen(function*() {
      yield* ensureUiBuilt
      const server = yield* TestServer
      const missing = yield* server.request("GET", "/ui/assets/not-there.js")
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "/ui/assets/not-there.js")
      const escape = yield* server.request("GET", "/ui/..%2f..%2fpackage.json")
      assert.strictEqual(escape.status, 400)
      assert.include(escape.body.detail, "leaves the UI directory")
      assert.notInclude(escape.text, "\"dependencies\"")
    }))

  it.effect("with the api_key extension the page loads without the key and the API still refuses without it", () =>
    Effect.gen(function*() {
      yield* ensureUiBuilt
      const server = yield* TestServer
      assert.strictEqual((yield* server.request("GET", "/ui/")).status, 200)
      const refused = yield* server.request("GET", "/v1/default/banks")
      assert.strictEqual(refused.status, 401)
      const allowed = yield* server.request("GET", "/v1/default/banks", { headers: { authorization: `Bearer ${key}` } })
      assert.strictEqual(allowed.status, 200)
    }))
})

/** The UI routes alone over an empty directory: a checkout where the build never ran. */
const notBuilt = HttpRouter.serve(uiRoutes(mkdtempSync(join(tmpdir(), "engram-ui-empty-"))), {
  disableListenLog: true,
  disableLogger: true
}).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))

layer(notBuilt)("web UI not built", (it) => {
  it.effect("answers 503 saying how to build it, and an asset 404", () =>
    Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      if (address._tag === "UnixPathAddress") return assert.fail("expected a TCP address")
      const base = `http://127.0.0.1:${address.port}`
      const page = yield* Effect.promise(() =>
        fetch(`${base}/ui/banks/x`).then(async (r) => ({
          status: r.status,
          body: await r.json() as { detail: string }
        }))
      )
      assert.strictEqual(page.status, 503)
      assert.include(page.body.detail, "npm run build:ui")
      const asset = yield* Effect.promise(() => fetch(`${base}/ui/assets/app.js`))
      assert.strictEqual(asset.status, 404)
    }))
})

describe("resolveAsset", () => {
  const root = "/srv/ui/dist"
  const cases: ReadonlyArray<readonly [string, ReturnType<typeof resolveAsset>]> = [
    ["/ui", { _tag: "Page" }],
    ["/ui/banks/a/recall", { _tag: "Page" }],
    ["/ui/assets/index-1.js", { _tag: "File", path: "/srv/ui/dist/assets/index-1.js", immutable: true }],
    ["/ui/robots.txt", { _tag: "File", path: "/srv/ui/dist/robots.txt", immutable: false }],
    ["/ui/../../etc/passwd.txt", { _tag: "Invalid", reason: "the path leaves the UI directory" }],
    ["/ui/%2e%2e/dist-other/x.js", { _tag: "Invalid", reason: "the path leaves the UI directory" }],
    ["/ui/%E0%A4%A.js", { _tag: "Invalid", reason: "the path is not valid percent-encoding" }]
  ]
  it("maps request paths to the page, a file inside the build, or a refusal", () => {
    for (const [path, expected] of cases) assert.deepStrictEqual(resolveAsset(root, path), expected, path)
  })
})
