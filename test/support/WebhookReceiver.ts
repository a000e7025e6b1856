/**
 * A webhook receiver on loopback for tests: records every request (headers and the raw body, which is what a
 * signature covers) and answers from a script of replies (a status code, or a hang that never answers).
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export type ReceiverReply = { readonly status: number } | { readonly hang: true }

export interface ReceivedRequest {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly rawBody: string
  readonly body: any
  readonly at: number
}

export interface WebhookReceiver {
  readonly url: string
  readonly received: Array<ReceivedRequest>
  /** Queues replies for the next requests, in order. */
  readonly script: (...replies: ReadonlyArray<ReceiverReply>) => void
  /** The reply once the script is used up (default 200). */
  readonly setFallback: (reply: ReceiverReply) => void
}

export const startReceiver = (port = 0) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ receiver: WebhookReceiver; close: () => void }>((resolve) => {
        const received: Array<ReceivedRequest> = []
        const queue: Array<ReceiverReply> = []
        let fallback: ReceiverReply = { status: 200 }
        const hanging = new Set<ServerResponse>()
        const server = createServer((request, response) => {
          let data = ""
          request.setEncoding("utf8")
          request.on("data", (chunk) => (data += chunk))
          request.on("end", () => {
            let body: unknown = undefined
            try {
              body = JSON.parse(data)
            } catch {
              body = undefined
            }
            received.push({ path: request.url ?? "", headers: request.headers, rawBody: data, body, at: Date.now() })
            const reply = queue.shift() ?? fallback
            if ("hang" in reply) {
              hanging.add(response)
              return
            }
            response.writeHead(reply.status, { "content-type": "application/json" })
            response.end(JSON.stringify({ received: true }))
          })
        })
        server.listen(port, "127.0.0.1", () => {
          const address = server.address()
          const bound = typeof address === "object" && address !== null ? address.port : 0
          resolve({
            receiver: {
              url: `http://127.0.0.1:${bound}`,
              received,
              script: (...replies) => void queue.push(...replies),
              setFallback: (reply) => void (fallback = reply)
            },
            close: () => {
              for (const response of hanging) response.destroy()
              server.closeAllConnections()
              server.close()
            }
          })
        })
      })
    ),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ receiver }) => receiver))
