/**
 * The service's Node server accepts connections from `listen`, before the app's handler is attached: a request read in
 * that window must be answered once the handler is there, not left hanging; after the handler is gone (shutdown) a
 * request gets a 503, not silence. Driven over a real socket.
 */
import { assert, describe, it } from "@effect/vitest"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { createHeldServer } from "../../../layers/http/HeldServer.ts"

const listening = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  )

const closed = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

const answer = (text: string) => (request: IncomingMessage, response: ServerResponse) => {
  response.writeHead(200, { "content-type": "text/plain" })
  response.end(`${text} ${request.url}`)
}

describe("HeldServer", () => {
  it("answers requests that arrived before the app's handler once it is attached, in their order", async () => {
    let read = () => {}
    const server = createHeldServer(() => read())
    const url = await listening(server)
    const readNext = () => new Promise<void>((resolve) => read = resolve)
    try {
      const firstRead = readNext()
      const first = fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) }).then((response) => response.text())
      await firstRead
      const secondRead = readNext()
      const second = fetch(`${url}/version`, { signal: AbortSignal.timeout(10_000) }).then((response) =>
        response.text()
      )
      // Both are read, with nobody to answer them yet; then the routes are ready.
      await secondRead
      server.on("request", answer("served"))
      assert.deepStrictEqual(await Promise.all([first, second]), ["served /health", "served /version"])
      // Later requests go straight to the handler.
      const later = await fetch(`${url}/later`, { signal: AbortSignal.timeout(10_000) }).then((response) =>
        response.text()
      )
      assert.strictEqual(later, "served /later")
    } finally {
      await closed(server)
    }
  })

  it("answers 503 once the app's handler is detached, instead of holding the request", async () => {
    const server = createHeldServer()
    const url = await listening(server)
    try {
      const handler = answer("served")
      server.on("request", handler)
      assert.strictEqual((await fetch(`${url}/a`)).status, 200)
      server.off("request", handler)
      const response = await fetch(`${url}/b`, { signal: AbortSignal.timeout(10_000) })
      assert.strictEqual(response.status, 503)
      assert.include(await response.text(), "shutting down")
    } finally {
      await closed(server)
    }
  })
})
