/**
 * Resident memory of a fresh server (issue 32: ≤ 300 MiB after one retain and one recall). Starts the real server
 * (`node bin/engram.mjs serve`, as `npm start` runs it: `bin/server-settings.mjs`) as a child process on a new data directory
 * with the offline defaults (embedded PGlite on its worker thread, GloVe embeddings, offline extraction), waits for
 * /health, retains one item (and waits for its background work), recalls once, and reads the child's VmRSS from
 * /proc after each step and again once the server has been quiet for 30 s — V8's memory reducer gives idle garbage
 * back a few ticks of 8 s after a burst (see `layers/runtime/IdleHeapRelease.ts`), so that is the figure that stays. The GloVe cache is shared between runs
 * (SERVICE_API_EMBEDDINGS_CACHE_DIR, converted once beforehand when missing), so the figure is a server's, not a
 * conversion's. With `--detail` the child also loads `bench/support/memoryProbe.ts` and reports, at the end, where
 * its memory is: V8 heaps (main thread and workers), memory outside them, mappings by backing, packages loaded.
 *
 * Rerun: `node bench/memory.ts [--runs 3] [--detail] [--thread main|worker] [--node-args "--liftoff-only"]`. Exits 1
 * when the median once quiet is above the target.
 */
import { existsSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { json } from "./support/LoadClient.ts"
import { memoryMiB, nodeFlags, startServer, tempDir } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const option = (name: string) => {
  const index = argv.indexOf(`--${name}`)
  return index >= 0 ? argv[index + 1] : undefined
}
if (argv.includes("--help")) {
  console.log(
    "node bench/memory.ts [--runs N (3)] [--detail] [--thread main|worker (worker)] [--settle SECONDS (30)] [--node-args \"FLAGS\"]"
  )
  process.exit(0)
}
const runs = Number(option("runs") ?? 3)
const detail = argv.includes("--detail")
const thread = option("thread") ?? "worker"
const settleSeconds = Number(option("settle") ?? 30)
const targetMiB = 300
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (message: string) => console.error(message)
const env = { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir, SERVICE_API_PGLITE_THREAD: thread }
/** Node flags given with `--node-args "..."` (to try V8 flags), besides those the server starts with. */
const nodeArgs = nodeFlags(option("node-args"))
const bank = "/v1/default/banks/memory-bench"

const waitForOperations = async (url: string) => {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const listed = await json(url, { method: "GET", path: `${bank}/operations` })
    if (!listed.operations.some((op: any) => op.status === "pending" || op.status === "running")) return
    await sleep(50)
  }
  throw new Error("the retain's background work did not finish in 120 s")
}

/** Starts a server once so the GloVe cache exists; the runs measure servers that read it. */
const primeCache = async () => {
  if (existsSync(join(cacheDir, "glove-wink-sg-100d.v2.bin"))) return
  log(`converting the GloVe table into ${cacheDir} first (once)`)
  const dataDir = tempDir("engram-memory-prime-")
  const server = await startServer(root, dataDir, env, nodeArgs)
  await server.stop()
  rmSync(dataDir, { recursive: true, force: true })
}

interface Run {
  readonly started: number
  readonly retained: number
  readonly recalled: number
  readonly settled: number
  readonly peak: number
  readonly report?: unknown
}

const once = async (index: number): Promise<Run> => {
  const dataDir = tempDir("engram-memory-")
  const reportFile = join(dataDir, "memory-report.json")
  const args = detail ? [...nodeArgs, "--import", join(root, "bench/support/memoryProbe.ts")] : nodeArgs
  const server = await startServer(root, dataDir, { ...env, ENGRAM_MEMORY_REPORT: reportFile }, args)
  try {
    await sleep(1000)
    const started = memoryMiB(server.pid).rss
    await json(server.url, {
      method: "POST",
      path: `${bank}/memories`,
      body: JSON.stringify({
        items: [{ content: "Alice moved to Lisbon in March and started work at the harbour museum." }]
      })
    })
    await waitForOperations(server.url)
    const retained = memoryMiB(server.pid).rss
    const answer = await json(server.url, {
      method: "POST",
      path: `${bank}/memories/recall`,
      body: JSON.stringify({ query: "Where does Alice work?" })
    })
    if (!Array.isArray(answer.results) || answer.results.length === 0) {
      throw new Error(`recall found nothing: ${JSON.stringify(answer).slice(0, 300)}`)
    }
    const recalled = memoryMiB(server.pid).rss
    await sleep(settleSeconds * 1000)
    const { rss: settled, peak } = memoryMiB(server.pid)
    let report: unknown
    if (detail) {
      process.kill(server.pid, "SIGUSR2")
      for (let i = 0; i < 100 && !existsSync(reportFile); i++) await sleep(50)
      await sleep(100)
      report = JSON.parse(readFileSync(reportFile, "utf8"))
    }
    log(
      `run ${index + 1}: started ${started.toFixed(0)}, retained ${retained.toFixed(0)}, recalled ${
        recalled.toFixed(0)
      }, ` +
        `settled ${settled.toFixed(0)} MiB (peak ${peak.toFixed(0)})`
    )
    return { started, retained, recalled, settled, peak, report }
  } finally {
    await server.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)]!
}

await primeCache()
const results: Array<Run> = []
for (let i = 0; i < runs; i++) results.push(await once(i))
const column = (key: "started" | "retained" | "recalled" | "settled" | "peak") => median(results.map((run) => run[key]))
console.log(
  `\nResident memory of a fresh server, PGlite on the ${thread} thread, npm start's settings${
    nodeArgs.length > 0 ? ` and ${nodeArgs.join(" ")}` : ""
  }, median of ${runs} (MiB):`
)
console.log(`| just started | after one retain | after one recall | ${settleSeconds} s later | peak |`)
console.log("|---:|---:|---:|---:|---:|")
console.log(
  `| ${column("started").toFixed(0)} | ${column("retained").toFixed(0)} | ${column("recalled").toFixed(0)} | ` +
    `${column("settled").toFixed(0)} | ${column("peak").toFixed(0)} |`
)
const met = column("settled") <= targetMiB
console.log(
  `target: ${settleSeconds} s after one retain and one recall ≤ ${targetMiB} MiB — ${met ? "met" : "NOT met"}`
)
if (detail) console.log(JSON.stringify(results.at(-1)!.report, null, 2))
process.exitCode = met ? 0 : 1
