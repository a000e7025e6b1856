/**
 * A loopback proxy in front of the scripted OpenAI server for the embeddings tests: it answers the next requests
 * with queued failures (a status, a dropped connection, no answer at all) and forwards the rest unchanged, so retries and
 * fail-fast paths run over real HTTP. The scripted server's `/embeddings` route always succeeds on its own.
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export type Fault =
  | { readonly status: number; readonly body?: unknown }
  | { readonly drop: true }
  | { readonly hang: true }

export interface FlakyUpstream {
  readonly baseUrl: string
  readonly fail: (...faults: ReadonlyArray<Fault>) => void
  /** Requests that reached the proxy, failed or forwarded. */
  readonly hits: () => number
}

const readBody = (request: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks)))
  })

/** Starts the proxy for the enclosing scope; `target` is the scripted server's base URL (`.../v1`). */
export const flakyUpstream = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<FlakyUpstream & { readonly close: () => Promise<void> }>((resolve) => {
        const faults: Array<Fault> = []
        const hanging = new Set<ServerResponse>()
        let hits = 0
        const server = createServer(async (request, response) => {
          hits++
          const body = await readBody(request)
          const fault = faults.shift()
          if (fault !== undefined && "drop" in fault) return void request.socket.destroy()
          if (fault !== undefined && "hang" in fault) return void hanging.add(response)
          if (fault !== undefined) {
            response.writeHead(fault.status, { "content-type": "application/json" })
            return void response.end(JSON.stringify(fault.body ?? { error: { message: `status ${fault.status}` } }))
          }
          const upstream = await fetch(`${target}${(request.url ?? "").replace(/^\/v1/, "")}`, {
            method: request.method ?? "POST",
            headers: { "content-type": "application/json", authorization: request.headers.authorization ?? "" },
            body
          })
          response.writeHead(upstream.status, { "content-type": "application/json" })
          response.end(await upstream.text())
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resolve({
            baseUrl: `http://127.0.0.1:${port}/v1`,
            fail: (...more) => void faults.push(...more),
            hits: () => hits,
            close: () =>
              new Promise<void>((done) => {
                for (const response of hanging) response.destroy()
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        })
      })
    ),
    (proxy) => Effect.promise(() => proxy.close())
  )
