/**
 * What one engram start costs the process and kill tests, which start servers many times per run: `src/main.ts`
 * on a copy of the tests' migrated PGlite template (`test/support/pgliteTemplate.ts`, built once here), with the
 * shared GloVe cache, spawned and polled every 100 ms until `/health` answers 200; the child's CPU seconds (utime +
 * stime of every thread, from `/proc`) and wall seconds at that moment. Each round starts it without and with Node's
 * compile cache (`NODE_COMPILE_CACHE`, as `vitest.config.ts` sets it for a test run), alternating, and one
 * `engram banks list --help` CLI command each way. CPU seconds, not wall time, because this machine is shared.
 * Linux only. Rerun: `node bench/start-cost.ts [rounds]` (default 3).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./support/ServerProcess.ts"
import { clockTicksPerSecond, cpuSeconds } from "../test/support/ProcessCpu.ts"

const rounds = Number(process.argv[2] ?? 3)
const scratch = mkdtempSync(join(tmpdir(), "engram-start-cost-"))
const template = join(scratch, "template")
const compileCache = join(scratch, "compile-cache")
const gloveCache = join(tmpdir(), "engram-glove-cache", "models")

const exited = (child: ChildProcess) => new Promise<void>((resolve) => child.once("exit", () => resolve()))

/** One start to healthy: the child's CPU and wall seconds then. */
const start = async (cached: boolean, stop: NodeJS.Signals = "SIGKILL") => {
  const dataDir = mkdtempSync(join(scratch, "data-"))
  cpSync(template, join(dataDir, "pglite"), { recursive: true })
  const port = await freePort()
  const env: Record<string, string | undefined> = {
    ...process.env,
    SERVICE_API_DATA_DIR: dataDir,
    SERVICE_API_PORT: String(port),
    SERVICE_API_EMBEDDINGS_CACHE_DIR: gloveCache,
    NODE_COMPILE_CACHE: cached ? compileCache : undefined
  }
  const began = Date.now()
  const child = spawn(process.execPath, ["src/main.ts"], { env, stdio: "ignore" })
  const deadline = began + 300_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it was healthy`)
    if (Date.now() > deadline) throw new Error("the server was not healthy within 5 minutes")
    await new Promise((resolve) => setTimeout(resolve, 100))
    const healthy = await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.ok, () => false)
    if (healthy) break
  }
  const cpu = cpuSeconds(child.pid!)
  const wall = (Date.now() - began) / 1000
  const gone = exited(child)
  child.kill(stop)
  await gone
  rmSync(dataDir, { recursive: true, force: true })
  return { cpu, wall }
}

/** The CPU seconds of this process's waited-for children (cutime + cstime) since the last call. */
let childrenSeen = 0
const childrenCpu = () => {
  const stat = readFileSync(`/proc/${process.pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const total = (Number(fields[13]) + Number(fields[14])) / clockTicksPerSecond
  const used = total - childrenSeen
  childrenSeen = total
  return used
}

/** One CLI command run to its end: its CPU seconds. */
const cliCommand = (cached: boolean) => {
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_COMPILE_CACHE: cached ? compileCache : undefined
  }
  childrenCpu()
  execFileSync(process.execPath, ["bin/engram.mjs", "banks", "list", "--help"], { env, stdio: "ignore" })
  return childrenCpu()
}

execFileSync(process.execPath, ["test/support/pgliteTemplate.ts", template], { stdio: "ignore" })
// Fill the compile cache once. Node writes it when a process exits normally (a SIGKILLed server writes nothing), so
// the first start is stopped with SIGTERM: the figures are those of a cache some earlier process filled.
await start(true, "SIGTERM")
cliCommand(true)

const results: Record<"off" | "on", { start: Array<number>; wall: Array<number>; cli: Array<number> }> = {
  off: { start: [], wall: [], cli: [] },
  on: { start: [], wall: [], cli: [] }
}
for (let round = 1; round <= rounds; round++) {
  for (const mode of ["off", "on"] as const) {
    const { cpu, wall } = await start(mode === "on")
    results[mode].start.push(cpu)
    results[mode].wall.push(wall)
    results[mode].cli.push(cliCommand(mode === "on"))
  }
  console.log(`round ${round}/${rounds} done (load ${loadavg()[0]!.toFixed(1)})`)
}
rmSync(scratch, { recursive: true, force: true })

const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / values.length
const range = (values: ReadonlyArray<number>) =>
  `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)} (mean ${mean(values).toFixed(2)})`
console.log("\n| compile cache | start to healthy, CPU s | wall s | CLI command, CPU s |")
console.log("|---|---:|---:|---:|")
for (const mode of ["off", "on"] as const) {
  const r = results[mode]
  console.log(`| ${mode} | ${range(r.start)} | ${range(r.wall)} | ${range(r.cli)} |`)
}
