/**
 * HTTP requests for benches that must tell a connection reset from any other failure and send binary bodies
 * (`.brain` files, multipart archives), and probe loops: one client in sequence, paced, recording latencies. Each
 * caller passes its own keep-alive agent, so a probe never queues behind other traffic for a socket. Never retries.
 */
import { Agent, request as httpRequest } from "node:http"
import { benchHeaders } from "./LoadClient.ts"

export interface Reply {
  readonly status: number
  readonly body: Buffer
  readonly ms: number
  /** The connection was reset or broken under the request (ECONNRESET, EPIPE, "socket hang up"). */
  readonly reset: boolean
}

/** One request on `agent`; a network failure answers status 0 with the error as its body. */
export const call = (
  agent: Agent,
  base: string,
  method: string,
  path: string,
  body?: string | Uint8Array,
  type = "application/json"
) =>
  new Promise<Reply>((resolve) => {
    const started = performance.now()
    const failed = (error: NodeJS.ErrnoException) =>
      resolve({
        status: 0,
        body: Buffer.from(String(error)),
        ms: performance.now() - started,
        reset: error.code === "ECONNRESET" || error.code === "EPIPE"
      })
    const headers = body === undefined
      ? { ...benchHeaders }
      : { ...benchHeaders, "content-type": type, "content-length": Buffer.byteLength(body) }
    const request = httpRequest(new URL(path, base), { method, agent, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks),
          ms: performance.now() - started,
          reset: false
        }))
      response.on("error", failed)
    })
    request.on("error", failed)
    request.end(body)
  })

/** A multipart/form-data body of text fields and files. */
export const multipart = (
  parts: ReadonlyArray<
    { name: string; value: string } | { name: string; filename: string; type: string; data: Uint8Array }
  >
) => {
  const boundary = `engram-bench-${crypto.randomUUID()}`
  const chunks = parts.flatMap((part) => [
    Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="${part.name}"` +
        ("filename" in part ? `; filename="${part.filename}"\r\ncontent-type: ${part.type}\r\n\r\n` : "\r\n\r\n")
    ),
    "filename" in part ? Buffer.from(part.data) : Buffer.from(part.value),
    Buffer.from("\r\n")
  ])
  return {
    body: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]),
    type: `multipart/form-data; boundary=${boundary}`
  }
}

export interface Probe {
  readonly latencies: Array<number>
  failed: number
  resets: number
  firstError?: string
}

export const emptyProbe = (): Probe => ({ latencies: [], failed: 0, resets: 0 })

/**
 * One client sending `next()` in sequence until `running` turns false; after each answer it waits until `paceMs`
 * have passed since the request went out. Latencies of 2xx answers; resets and other failures counted apart.
 */
export const probeLoop = async (
  base: string,
  agent: Agent,
  next: () => { readonly method: string; readonly path: string; readonly body?: string },
  paceMs: number,
  running: () => boolean
) => {
  const result = emptyProbe()
  while (running()) {
    const { method, path, body } = next()
    const reply = await call(agent, base, method, path, body)
    if (reply.status >= 200 && reply.status < 300) result.latencies.push(reply.ms)
    else {
      if (reply.reset) result.resets++
      else result.failed++
      result.firstError ??= `${method} ${path}: ${reply.status} ${reply.body.toString("utf8").slice(0, 200)}`
    }
    if (reply.ms < paceMs) await new Promise((resolve) => setTimeout(resolve, paceMs - reply.ms))
  }
  return result
}
