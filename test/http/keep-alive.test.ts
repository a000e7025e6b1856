/**
 * A kept-alive connection left idle between requests stays usable: the server keeps it for
 * SERVICE_API_KEEP_ALIVE_TIMEOUT (95 s by default, longer than common client pools keep theirs), so the client closes
 * an idle connection first. With Node's 5 s a client whose pool kept the connection longer (Go's 90 s, a bench that
 * paused 6 s) sent its next request as the server closed it, and saw a reset. A short setting closes idle connections.
 * The connection is the HTTP server's, whatever the database: the file runs on the PGlite tier only (it is mostly the
 * idle waits themselves, 12 s a tier).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { connect, type Socket } from "node:net"
import { databaseTier, testApp, TestServer } from "../support/TestServer.ts"

/** A raw connection that sends requests and reads whole responses, and notes when the server closes it. */
const openConnection = (url: string) =>
  Effect.promise(() =>
    new Promise<{ readonly socket: Socket; readonly closed: () => boolean }>((resolve, reject) => {
      const { hostname, port } = new URL(url)
      const socket = connect(Number(port), hostname)
      let closed = false
      socket.on("close", () => (closed = true))
      socket.once("error", reject)
      socket.once("connect", () => resolve({ socket, closed: () => closed }))
    })
  )

/** `GET /health` on the connection: the status line of its answer. */
const health = (socket: Socket) =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      let received = ""
      const onData = (chunk: Buffer) => {
        received += chunk.toString("latin1")
        const end = received.indexOf("\r\n\r\n")
        const length = /content-length:\s*(\d+)/i.exec(received)?.[1]
        if (end >= 0 && length !== undefined && received.length >= end + 4 + Number(length)) {
          socket.off("data", onData)
          resolve(received.slice(0, received.indexOf("\r\n")))
        }
      }
      socket.on("data", onData)
      socket.once("close", () => reject(new Error(`closed before an answer; read ${JSON.stringify(received)}`)))
      socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
    })
  )

// A skipped suite builds no layer: the PostgreSQL project starts no server for it.
describe.skipIf(databaseTier !== "pglite")("kept-alive connections", () => {
  layer(testApp(), { excludeTestServices: true })("kept-alive connections, default timeout", (it) => {
    it.effect(
      "a connection idle for 7 s (past Node's 5 s) still answers its next request",
      () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const connection = yield* openConnection(server.url)
          assert.strictEqual(yield* health(connection.socket), "HTTP/1.1 200 OK")
          yield* Effect.sleep("7 seconds")
          assert.isFalse(connection.closed(), "the server closed the idle connection")
          assert.strictEqual(yield* health(connection.socket), "HTTP/1.1 200 OK")
          connection.socket.destroy()
        }),
      30_000
    )
  })

  layer(testApp({ keepAliveTimeout: Duration.seconds(1) }), { excludeTestServices: true })(
    "kept-alive connections, a short timeout",
    (it) => {
      it.effect("closes a connection idle past it", () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const connection = yield* openConnection(server.url)
          assert.strictEqual(yield* health(connection.socket), "HTTP/1.1 200 OK")
          // Node closes it after the timeout and its own 1 s of grace.
          yield* Effect.sleep("3500 millis")
          assert.isTrue(connection.closed(), "the idle connection is still open")
        }), 30_000)
    }
  )
})
