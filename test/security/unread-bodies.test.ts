/**
 * A refusal given before the body arrived ends the connection (issue 33): a client that declares a 25 MB body and
 * sends its first megabyte gets its 4xx with `connection: close`, and the server closes the socket without waiting
 * for the other 24 MB. Before, Node kept the connection open to read and discard the rest of every refused upload,
 * so a refused body cost the server as much as an accepted one; `@effect/platform-node` now reads at most 256 KiB of
 * an unread body before it closes, and these tests keep that so. A body refused part way (past the element cap) stops
 * being read there and is closed the same way. A request whose body was read keeps its connection.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { connect } from "node:net"
import { testApp, TestServer } from "../support/TestServer.ts"

const key = "k-unread-bodies-0123456789"
const app = testApp({ tenantExtension: "api_key", tenantApiKey: Option.some(Redacted.make(key)) })

interface Exchange {
  /** The status line and headers the server sent, lower-cased. */
  readonly head: string
  /** Whether the server closed the connection within the wait, though the declared body was never finished. */
  readonly closedByServer: boolean
}

/**
 * Opens a socket, sends the request head and `body`, which may be shorter than the `declared` length, then waits up to
 * `waitMs` after the answer began for the server to close the connection (nothing more is sent meanwhile).
 */
const exchange = (
  url: string,
  options: { readonly headers: string; readonly declared: number; readonly body: Buffer; readonly waitMs: number }
) =>
  Effect.promise(() =>
    new Promise<Exchange>((resolve, reject) => {
      const { hostname, port } = new URL(url)
      const socket = connect(Number(port), hostname)
      let received = ""
      let settled = false
      const finish = (closedByServer: boolean) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        socket.destroy()
        resolve({ head: received.split("\r\n\r\n")[0]!.toLowerCase(), closedByServer })
      }
      // A deadline for the answer itself, then `waitMs` from its first byte.
      let timer = setTimeout(() => finish(false), 60_000)
      socket.on("data", (chunk) => {
        if (received === "") {
          clearTimeout(timer)
          timer = setTimeout(() => finish(false), options.waitMs)
        }
        received += chunk.toString("latin1")
      })
      socket.on("end", () => finish(true))
      socket.on("close", () => finish(true))
      socket.on("error", (error) => received === "" ? reject(error) : finish(true))
      socket.write(
        `POST /v1/default/banks/unread/memories HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
          `content-type: application/json\r\ncontent-length: ${options.declared}\r\n${options.headers}\r\n`
      )
      socket.write(options.body)
    })
  )

// Long enough for any machine to close the socket; a kept-alive connection would wait for the rest of the body forever.
const closeWaitMs = 15_000

layer(app, { excludeTestServices: true })("unread bodies", (it) => {
  it.effect("a 401 given before the body arrived closes the connection instead of reading 25 MB", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const body = Buffer.alloc(1_000_000, 0x20)
      const result = yield* exchange(server.url, { headers: "", declared: 25_000_000, body, waitMs: closeWaitMs })
      assert.match(result.head, /^http\/1\.1 401/)
      assert.include(result.head, "connection: close")
      assert.isTrue(result.closedByServer, "the server kept the connection open to read the rest of the body")
    }))

  it.effect("a 413 for a declared length over the cap closes the connection", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const headers = `authorization: Bearer ${key}\r\n`
      const body = Buffer.alloc(64 * 1024, 0x20)
      const result = yield* exchange(server.url, { headers, declared: 2 ** 31, body, waitMs: closeWaitMs })
      assert.match(result.head, /^http\/1\.1 413/)
      assert.isTrue(result.closedByServer, "the server kept the connection open to read the rest of the body")
    }))

  it.effect("with the key, a body past the element cap is refused at the cap and its other 20 MB are never read", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const headers = `authorization: Bearer ${key}\r\n`
      // 5 MB of 1.25M strings, past the 1M element cap; 25 MB declared, as the hostile wide body of issue 33 would.
      const body = Buffer.from(`[${`"ab",`.repeat(1_250_000)}`)
      const result = yield* exchange(server.url, { headers, declared: 25_000_000, body, waitMs: closeWaitMs })
      assert.match(result.head, /^http\/1\.1 413/)
      assert.include(result.head, "connection: close")
      assert.isTrue(result.closedByServer, "the server went on reading a body it had already refused")
    }))

  it.effect("a request whose body was read keeps its connection alive", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const headers = `authorization: Bearer ${key}\r\n`
      const body = Buffer.from(JSON.stringify({ items: [{ content: "Alice keeps her connection open." }] }))
      const result = yield* exchange(server.url, { headers, declared: body.length, body, waitMs: 1_000 })
      assert.match(result.head, /^http\/1\.1 200/)
      assert.notInclude(result.head, "connection: close")
      assert.isFalse(result.closedByServer, "the server closed a connection whose request it had read")
    }))
})
