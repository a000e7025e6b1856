/**
 * A web page in the user's browser cannot drive a loopback engram: a cross-site request that would change something
 * is refused (by `Sec-Fetch-Site` or its `Origin`), a body that does not say it is JSON is refused (a browser sends
 * `text/plain` cross-site without asking first), a foreign `Host` (DNS rebinding) is refused on every route — and
 * nothing is stored by any of them. The service's own pages and ordinary clients are not affected.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

const base = "/v1/default/banks/browser-guard"
const item = JSON.stringify({ items: [{ content: "Planted by a web page." }] })

const raw = (url: string, init: RequestInit & { headers?: Record<string, string> }) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, text: await response.text() }
  })

layer(testApp({ enableObservations: false }), { excludeTestServices: true })("browser guard", (it) => {
  it.effect("cross-site writes, untyped bodies and foreign hosts are refused, and nothing is stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const url = `${server.url}${base}/memories`
      const refused: ReadonlyArray<readonly [string, Record<string, string>, number]> = [
        ["cross-site by Sec-Fetch-Site", { "content-type": "application/json", "sec-fetch-site": "cross-site" }, 403],
        ["a foreign Origin", { "content-type": "application/json", origin: "https://evil.example" }, 403],
        ["a text/plain body", { "content-type": "text/plain" }, 415],
        ["a body with no type", {}, 415]
      ]
      for (const [label, headers, status] of refused) {
        const answer = yield* raw(url, { method: "POST", headers, body: item })
        assert.strictEqual(answer.status, status, `${label}: ${answer.text}`)
        assert.include(JSON.parse(answer.text).detail, status === 415 ? "application/json" : "", label)
      }
      // DNS rebinding: a foreign Host name is refused on reads too. (fetch cannot set Host; node:http can.)
      const rebound = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const { hostname, port } = new URL(server.url)
          void import("node:http").then(({ request }) => {
            const sent = request(
              { hostname, port, path: "/v1/default/banks", headers: { host: "evil.example" } },
              (response) => {
                response.resume()
                resolve(response.statusCode ?? 0)
              }
            )
            sent.end()
          })
        })
      )
      assert.strictEqual(rebound, 403)
      // The same write from the service's own origin, and from a client that is not a browser, is served.
      const sameOrigin = yield* raw(url, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.url },
        body: item
      })
      assert.strictEqual(sameOrigin.status, 200, sameOrigin.text)
      const listed = yield* server.request("GET", `${base}/memories/list`)
      assert.strictEqual(listed.body.total, 1)
    }))
})
