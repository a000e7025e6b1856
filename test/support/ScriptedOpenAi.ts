/**
 * A scripted model server on loopback for tests: `/v1/chat/completions` (OpenAI-compatible), `/v1/messages`
 * (Anthropic) and `/v1beta/models/{model}:generateContent` (Gemini) answer from one queue of scripted replies
 * (text, raw body, HTTP status or a hang), each in its own wire format; `/v1/embeddings` answers deterministic
 * vectors, and every request is recorded so tests can assert what the service sent (prompts, headers).
 */
import { Effect } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"

export type ScriptedReply =
  | {
    readonly content: string
    readonly usage?: { prompt_tokens: number; completion_tokens: number }
    /** Answer only after this many milliseconds (a slow model). */
    readonly delayMs?: number
    /**
     * Answer only once this settles: a model that thinks for as long as the test needs to check what happens
     * meanwhile, instead of a fixed delay long enough for a loaded machine (the client's own timeout still applies).
     */
    readonly heldUntil?: Promise<unknown>
  }
  | { readonly status: number; readonly body?: unknown }
  | { readonly hang: true }
  | { readonly raw: unknown }

export interface RecordedRequest {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
}

export interface ScriptedOpenAi {
  /** The OpenAI-compatible base URL (`…/v1`). */
  readonly baseUrl: string
  /** `http://127.0.0.1:port`: Anthropic's base URL is `${origin}/v1`, Gemini's `${origin}/v1beta`. */
  readonly origin: string
  readonly requests: Array<RecordedRequest>
  /** Queues replies for the next chat completions, in order. */
  readonly script: (...replies: ReadonlyArray<ScriptedReply>) => void
  /** Answers chat completions with this when the queue is empty (default: HTTP 500). */
  readonly setFallback: (reply: ScriptedReply | ((body: any) => ScriptedReply)) => void
  readonly setEmbeddingDimensions: (dimensions: number) => void
  readonly chatRequests: () => ReadonlyArray<RecordedRequest>
  /** Requests to any of the three generation routes, in order. */
  readonly modelRequests: () => ReadonlyArray<RecordedRequest>
}

const isModelRoute = (path: string) =>
  path.endsWith("/chat/completions") || path.endsWith("/messages") || path.endsWith(":generateContent")

/** A deterministic pseudo-embedding: hashed character trigrams, so similar texts get similar vectors. */
export const fakeEmbedding = (text: string, dimensions: number): Array<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  const normalized = ` ${text.toLowerCase()} `
  for (let i = 0; i + 3 <= normalized.length; i++) {
    let hash = 2166136261
    for (let j = i; j < i + 3; j++) hash = Math.imul(hash ^ normalized.charCodeAt(j), 16777619)
    vector[Math.abs(hash) % dimensions]! += 1
  }
  const norm = Math.hypot(...vector) || 1
  return vector.map((value) => value / norm)
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = ""
    request.on("data", (chunk) => (data += chunk))
    request.on("end", () => resolve(data))
  })

const send = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const completion = (model: string, content: string, usage?: { prompt_tokens: number; completion_tokens: number }) => ({
  id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
  object: "chat.completion",
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: {
    prompt_tokens: usage?.prompt_tokens ?? 10,
    completion_tokens: usage?.completion_tokens ?? 5,
    total_tokens: (usage?.prompt_tokens ?? 10) + (usage?.completion_tokens ?? 5)
  }
})

const anthropicMessage = (
  model: string,
  content: string,
  usage?: { prompt_tokens: number; completion_tokens: number }
) => ({
  id: `msg_${Math.random().toString(36).slice(2)}`,
  type: "message",
  role: "assistant",
  model,
  content: [{ type: "text", text: content }],
  stop_reason: "end_turn",
  usage: { input_tokens: usage?.prompt_tokens ?? 10, output_tokens: usage?.completion_tokens ?? 5 }
})

const geminiAnswer = (
  model: string,
  content: string,
  usage?: { prompt_tokens: number; completion_tokens: number }
) => ({
  candidates: [{ content: { role: "model", parts: [{ text: content }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: {
    promptTokenCount: usage?.prompt_tokens ?? 10,
    candidatesTokenCount: usage?.completion_tokens ?? 5,
    totalTokenCount: (usage?.prompt_tokens ?? 10) + (usage?.completion_tokens ?? 5)
  },
  modelVersion: model
})

/** Starts the server for the enclosing scope. */
export const scriptedOpenAi = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<ScriptedOpenAi & { close: () => Promise<void> }>((resolve) => {
      const queue: Array<ScriptedReply> = []
      const requests: Array<RecordedRequest> = []
      let fallback: ScriptedReply | ((body: any) => ScriptedReply) = {
        status: 500,
        body: { error: { message: "no scripted reply" } }
      }
      let dimensions = 16
      const hanging = new Set<ServerResponse>()
      const server = createServer(async (request, response) => {
        const text = await readBody(request)
        let body: any = undefined
        try {
          body = text === "" ? undefined : JSON.parse(text)
        } catch {
          body = text
        }
        const path = (request.url ?? "").split("?")[0]!
        requests.push({ path, headers: request.headers, body })
        if (path.endsWith("/embeddings")) {
          const inputs: Array<string> = Array.isArray(body?.input) ? body.input : [body?.input ?? ""]
          return send(response, 200, {
            object: "list",
            model: body?.model ?? "fake-embedding",
            data: inputs.map((input, index) => ({
              object: "embedding",
              index,
              embedding: fakeEmbedding(input, body?.dimensions ?? dimensions)
            })),
            usage: { prompt_tokens: inputs.length * 3, total_tokens: inputs.length * 3 }
          })
        }
        if (!isModelRoute(path)) return send(response, 404, { error: { message: `no route ${path}` } })
        const next = queue.shift() ?? (typeof fallback === "function" ? fallback(body) : fallback)
        if ("hang" in next) {
          hanging.add(response)
          return
        }
        if ("raw" in next) return send(response, 200, next.raw)
        if ("status" in next) {
          return send(response, next.status, next.body ?? { error: { message: `status ${next.status}` } })
        }
        if (next.delayMs !== undefined) {
          await new Promise((resolve) => setTimeout(resolve, next.delayMs))
        }
        if (next.heldUntil !== undefined) await next.heldUntil
        if (path.endsWith("/messages")) {
          return send(response, 200, anthropicMessage(body?.model ?? "scripted", next.content, next.usage))
        }
        if (path.endsWith(":generateContent")) {
          const model = path.slice(path.lastIndexOf("/") + 1, path.lastIndexOf(":"))
          return send(response, 200, geminiAnswer(model, next.content, next.usage))
        }
        return send(response, 200, completion(body?.model ?? "scripted", next.content, next.usage))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resolve({
          baseUrl: `http://127.0.0.1:${port}/v1`,
          origin: `http://127.0.0.1:${port}`,
          requests,
          script: (...replies) => void queue.push(...replies),
          setFallback: (reply) => void (fallback = reply),
          setEmbeddingDimensions: (value) => void (dimensions = value),
          chatRequests: () => requests.filter((request) => request.path.endsWith("/chat/completions")),
          modelRequests: () => requests.filter((request) => isModelRoute(request.path)),
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
  (server) => Effect.promise(() => server.close())
)
