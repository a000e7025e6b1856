/**
 * Helpers for codebase tests: multipart uploads to the import routes, and waiting for an operation to settle.
 */
import { Duration, Effect } from "effect"
import type { Response, TestServer } from "./TestServer.ts"
import { eventually } from "./TestTasks.ts"

export const codebasesPath = (bankId: string) => `/v1/default/banks/${bankId}/codebases`

export const upload = (
  server: typeof TestServer.Service,
  path: string,
  field: "archive" | "file",
  filename: string,
  bytes: Uint8Array | string,
  request: unknown
): Effect.Effect<Response> =>
  Effect.promise(async () => {
    const form = new FormData()
    form.append(field, new Blob([typeof bytes === "string" ? bytes : Buffer.from(bytes)]), filename)
    form.append("request", typeof request === "string" ? request : JSON.stringify(request))
    const response = await fetch(server.url + path, { method: "POST", body: form })
    const text = await response.text()
    let body: any = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, body, text, headers: response.headers }
  })

/** Waits until the operation completed or failed, and returns its detail. */
export const settled = (
  server: typeof TestServer.Service,
  bankId: string,
  operationId: string,
  timeout = Duration.seconds(90)
) =>
  eventually(
    server.request("GET", `/v1/default/banks/${bankId}/operations/${operationId}`),
    (response) => ["completed", "failed", "cancelled"].includes(response.body?.status),
    timeout
  ).pipe(Effect.map((response) => response.body))
