/**
 * A fake OpenAI-compatible transcription server on loopback: `POST /v1/audio/transcriptions` records the
 * multipart form it received (fields, the uploaded file's name, type and bytes, the Authorization header) and
 * answers with a scripted status and body.
 */
import { Effect } from "effect"
import { createServer } from "node:http"

export interface RecordedUpload {
  readonly path: string
  readonly authorization: string | undefined
  readonly fields: Record<string, string>
  readonly file: { readonly name: string; readonly type: string; readonly bytes: Uint8Array } | undefined
}

export interface FakeTranscription {
  readonly baseUrl: string
  readonly uploads: Array<RecordedUpload>
  /** What the next requests get; default `200 {"text": ...}`. */
  readonly reply: (status: number, body: unknown) => void
}

export const fakeTranscription = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<FakeTranscription & { readonly close: () => Promise<void> }>((resolve) => {
      const uploads: Array<RecordedUpload> = []
      let answer: { status: number; body: unknown } = {
        status: 200,
        body: { text: "Meet Ravi at the harbour at noon." }
      }
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", async () => {
          // undici's Response parses multipart/form-data the way a real server framework would.
          const form = await new Response(Buffer.concat(chunks), {
            headers: { "content-type": request.headers["content-type"] ?? "" }
          }).formData()
          const fields: Record<string, string> = {}
          let file: RecordedUpload["file"]
          for (const [key, value] of form.entries()) {
            if (typeof value === "string") fields[key] = value
            else file = { name: value.name, type: value.type, bytes: new Uint8Array(await value.arrayBuffer()) }
          }
          uploads.push({ path: request.url ?? "", authorization: request.headers.authorization, fields, file })
          response.writeHead(answer.status, { "content-type": "application/json" })
          response.end(JSON.stringify(answer.body))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resolve({
          baseUrl: `http://127.0.0.1:${port}/v1`,
          uploads,
          reply: (status, body) => void (answer = { status, body }),
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        })
      })
    })
  ),
  (server) => Effect.promise(() => server.close())
)
