/**
 * The Node HTTP server, with no request ever left unanswered around the app's handler.
 *
 * `NodeHttpServer.layer` listens as soon as it is built, and `HttpRouter.serve` attaches the app's `request` handler
 * only once every route is built, later in the same start-up. Node accepts connections from `listen` on: a request
 * read in between met no listener, got no answer and held its client until the client gave up — a health check
 * polling a starting server, a process-test restart (`fetch` has no timeout), an agent retrying early. Here requests
 * that arrive before the handler wait for it and are handed to it once it is attached, in the order they came; after
 * the handler is detached (shutdown) a request is answered 503 and its connection closed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

const shuttingDown = (_request: IncomingMessage, response: ServerResponse) => {
  response.writeHead(503, { "content-type": "application/json", connection: "close" })
  response.end(JSON.stringify({ detail: "the service is shutting down" }))
}

/**
 * `onHeld` is told of each request that waits (tests, logs). `keepAliveTimeoutMs` replaces Node's 5 s idle timeout of
 * kept-alive connections (see `EngramSettings.keepAliveTimeout`).
 */
export const createHeldServer = (
  onHeld: (request: IncomingMessage) => void = () => {},
  keepAliveTimeoutMs?: number
): Server => {
  const server = createServer(keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: keepAliveTimeoutMs })
  let held: Array<readonly [IncomingMessage, ServerResponse]> = []
  /** The app's request handlers attached now (`HttpRouter.serve` attaches one). */
  let handlers = 0
  const hold: RequestListener = (request, response) => {
    held.push([request, response])
    onHeld(request)
  }
  const isOurs = (listener: unknown) => listener === hold || listener === shuttingDown
  server.on("request", hold)
  server.on("newListener", (event, listener) => {
    if (event !== "request" || isOurs(listener) || handlers++ > 0) return
    server.off("request", hold)
    server.off("request", shuttingDown)
    const waiting = held
    held = []
    // `newListener` is emitted before the listener is added: hand over on the next turn, when it is in place.
    if (waiting.length > 0) {
      setImmediate(() => {
        for (const [request, response] of waiting) (listener as RequestListener)(request, response)
      })
    }
  })
  server.on("removeListener", (event, listener) => {
    if (event === "request" && !isOurs(listener) && --handlers === 0) server.on("request", shuttingDown)
  })
  return server
}
