/**
 * Sends one HTTP request from a child process. A test that times the server (/health while a 25 MB body arrives)
 * cannot send that body from its own process: the test's client shares the server's event loop, so writing the body
 * and collecting its buffers would be counted as the server's stall.
 */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const script = `
const [url, file, headersJson, chunked] = process.argv.slice(1)
const bytes = require("node:fs").readFileSync(file)
const body = chunked === "chunked"
  ? new ReadableStream({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 1 << 20) controller.enqueue(bytes.subarray(at, at + (1 << 20)))
        controller.close()
      }
    })
  : bytes
const started = performance.now()
fetch(url, { method: "POST", headers: JSON.parse(headersJson), body, duplex: "half" })
  .then(async (response) => {
    const text = await response.text()
    process.stdout.write(JSON.stringify({ status: response.status, text, ms: performance.now() - started }))
  })
  .catch((error) => process.stdout.write(JSON.stringify({ status: 0, text: String(error), ms: performance.now() - started })))
`

/** Writes `bytes` to a temporary file once, for `sendFromChild`. */
export const bodyFile = (name: string, bytes: Uint8Array): string => {
  const file = join(tmpdir(), `engram-body-${process.pid}-${name}`)
  writeFileSync(file, bytes)
  return file
}

export interface ChildSent {
  readonly status: number
  readonly body: any
  readonly ms: number
}

export const sendFromChild = (
  url: string,
  file: string,
  headers: Record<string, string>,
  mode: "declared" | "chunked" = "declared"
): Promise<ChildSent> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script, url, file, JSON.stringify(headers), mode], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk) => void (out += chunk))
    child.on("error", reject)
    child.on("close", () => {
      try {
        const sent = JSON.parse(out) as { status: number; text: string; ms: number }
        let body: unknown = undefined
        try {
          body = sent.text === "" ? undefined : JSON.parse(sent.text)
        } catch {
          body = sent.text
        }
        resolve({ status: sent.status, body, ms: sent.ms })
      } catch (error) {
        reject(error)
      }
    })
  })
