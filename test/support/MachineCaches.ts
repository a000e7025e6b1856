/**
 * The caches a test run keeps per machine, outside its own scratch space: the GloVe table, converted once and shared
 * by every test and the child processes they start, and Node's on-disk cache of compiled modules
 * (`NODE_COMPILE_CACHE`), filled here before the first test. Node writes that cache only when a process exits
 * normally, and most test servers end with a SIGKILL: on a fresh clone (entries are keyed by each file's path) a
 * server start gained nothing from it until some server that had loaded the same modules happened to stop gracefully.
 * So the run's global setup starts one server on a copy of the PGlite template, has it retain and recall once
 * (extraction, embedding and recall load modules on first use), and stops it with SIGTERM: every later start reads
 * what it compiled (`node bench/start-cost.ts`: 5.4 → 4.5 CPU s a start to healthy).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

// Both are read when this module is loaded, before the run's global setup points TMPDIR at the run's own directory.
export const gloveCacheDirectory = join(tmpdir(), "engram-glove-cache", "models")
export const compileCacheDirectory = join(tmpdir(), "engram-node-compile-cache")

/** How long the warm-up may take before the run goes on without it (a start took up to 187 s at load 30). */
const warmupDeadline = 180_000

/** A port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

const call = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(warmupDeadline)
  })
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
}

/** Polls `/health` until it answers 200; throws if the child exits first or the deadline passes. */
const healthy = async (url: string, child: ChildProcess, output: () => string) => {
  const deadline = Date.now() + warmupDeadline
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the warm-up server exited:\n${output()}`)
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the warm-up server was not healthy in time")
}

/**
 * Starts `src/main.ts` on a copy of `template` in `scratch` (a directory of the run), retains and recalls once, and stops
 * it gracefully.
 */
export const warmCompileCache = async (template: string, scratch: string): Promise<void> => {
  const dataDir = mkdtempSync(join(scratch, "compile-cache-warmup-"))
  cpSync(template, join(dataDir, "pglite"), { recursive: true })
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: {
      ...process.env,
      NODE_COMPILE_CACHE: compileCacheDirectory,
      SERVICE_API_PORT: String(port),
      SERVICE_API_DATA_DIR: dataDir,
      SERVICE_API_EMBEDDINGS_CACHE_DIR: gloveCacheDirectory
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  let output = ""
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  try {
    await healthy(url, child, () => output)
    const bank = "/v1/default/banks/warmup"
    await call(url, `${bank}/memories`, {
      items: [{ content: "Ada moved the greenhouse lamps to bay 4 on Tuesday.", timestamp: "2026-01-06T10:00:00Z" }]
    })
    await call(url, `${bank}/memories/recall`, { query: "Where are the greenhouse lamps?" })
    child.kill("SIGTERM")
    await exited
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL")
  }
}
