/**
 * A loopback HTTP server whose routes answer as a test scripts them — JSON with a status, a bare status, a hang, or
 * a body that never ends — for tests of what engram does with remotes that misbehave (learn remotes, search
 * providers, git hosts). Every request is recorded with its headers; an endless body records how many bytes went
 * out and whether the client hung up.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export type HostileReply =
  | { readonly json: unknown; readonly status?: number }
  | { readonly status: number }
  | { readonly hang: true }
  /** `prefix` first (e.g. `{"items":[` so the start reads as JSON), then filler for ever, with no content-length. */
  | { readonly endless: { readonly contentType: string; readonly prefix?: string } }

export interface EndlessBody {
  readonly path: string
  /** Bytes written so far. */
  readonly sent: () => number
  /** Resolves when the client closed the connection (it stopped reading). */
  readonly closed: Promise<void>
}

export interface HostileRemote {
  readonly origin: string
  readonly requests: Array<{ readonly path: string; readonly headers: IncomingMessage["headers"] }>
  readonly endless: Array<EndlessBody>
  /** How `path` (without its query; a trailing `*` matches a prefix) answers from now on. */
  readonly route: (path: string, reply: HostileReply) => void
}

const chunk = Buffer.alloc(64 * 1024, "a")

const pumpForever = (response: ServerResponse, prefix: string) => {
  let sent = 0
  const closed = new Promise<void>((resolve) => response.on("close", () => resolve()))
  response.write(prefix)
  sent += Buffer.byteLength(prefix)
  const pump = () => {
    while (!response.destroyed) {
      sent += chunk.length
      if (!response.write(chunk)) return void response.once("drain", pump)
    }
  }
  pump()
  return { sent: () => sent, closed }
}

export const hostileRemote = Effect.acquireRelease(
  Effect.callback<HostileRemote & { readonly close: () => void }>((resume) => {
    const routes = new Map<string, HostileReply>()
    const requests: HostileRemote["requests"] = []
    const endless: Array<EndlessBody> = []
    const open = new Set<ServerResponse>()
    const replyFor = (path: string) =>
      routes.get(path) ??
        [...routes.entries()].find(([pattern]) => pattern.endsWith("*") && path.startsWith(pattern.slice(0, -1)))?.[1]
    const server = createServer((request, response) => {
      const path = (request.url ?? "/").split("?")[0]!
      requests.push({ path, headers: request.headers })
      request.resume()
      const reply = replyFor(path) ?? { status: 404 }
      if ("hang" in reply) return void open.add(response)
      if ("endless" in reply) {
        open.add(response)
        response.writeHead(200, { "content-type": reply.endless.contentType })
        return void endless.push({ path, ...pumpForever(response, reply.endless.prefix ?? "") })
      }
      response.writeHead(reply.status ?? 200, { "content-type": "application/json" })
      response.end("json" in reply ? JSON.stringify(reply.json) : JSON.stringify({ status: reply.status }))
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({
        origin: `http://127.0.0.1:${port}`,
        requests,
        endless,
        route: (path, reply) => void routes.set(path, reply),
        close: () => {
          for (const response of open) response.destroy()
          server.closeAllConnections()
          server.close()
        }
      }))
    })
  }),
  (remote) => Effect.sync(() => remote.close())
)
