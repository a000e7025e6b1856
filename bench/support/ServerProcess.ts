/**
 * Starts engram as `npm start` runs it (`node bin/engram.mjs serve`: the server's V8 and malloc settings, see
 * bin/server-settings.mjs) as a child process for benchmarks and reads its CPU time and resident memory
 * from /proc. Every child, temporary directory and PostgreSQL schema made here is registered for clean-up, which runs
 * on normal exit, on an error and on Ctrl-C, so no server outlives the bench and no data is left behind.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const children = new Set<ChildProcess>()
const directories = new Set<string>()
/** schema → the database URL it lives on */
const schemas = new Map<string, string>()

const cleanUp = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  children.clear()
  for (const dir of directories) rmSync(dir, { recursive: true, force: true })
  directories.clear()
  for (const [schema, url] of schemas) {
    try {
      // Synchronous, because this also runs on process exit; psql is on every machine that runs PostgreSQL.
      execFileSync("psql", [url, "-q", "-c", `DROP SCHEMA IF EXISTS "${schema}" CASCADE`], { stdio: "ignore" })
    } catch {
      console.error(`could not drop the bench schema ${schema}`)
    }
  }
  schemas.clear()
}
process.on("exit", cleanUp)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the server and removing temporary data`)
    cleanUp()
    process.exit(130)
  })
}

export const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  directories.add(dir)
  return dir
}

/** A fresh schema name on `databaseUrl`, dropped when the bench ends (the service creates it on start). */
export const tempSchema = (databaseUrl: string, prefix: string) => {
  const schema = `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`
  schemas.set(schema, databaseUrl)
  return schema
}

export const removeDir = (dir: string) => {
  rmSync(dir, { recursive: true, force: true })
  directories.delete(dir)
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs a Node script of the project as a tracked child; resolves with its stdout when it exits with 0. */
export const runScript = (root: string, script: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, script), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (chunk) => (stdout += chunk))
    child.stderr!.on("data", (chunk) => (stderr += chunk))
    child.on("exit", (code, signal) => {
      children.delete(child)
      if (code === 0) resolve(stdout)
      else reject(new Error(`${script} exited with ${code ?? signal}:\n${stderr.slice(-4000)}`))
    })
  })

export interface Server {
  readonly url: string
  readonly pid: number
  readonly logTail: () => string
  readonly stop: () => Promise<void>
}

/** Node flags a bench was given as one option (`--server-args "--cpu-prof --cpu-prof-dir=DIR"`), for `startServer`. */
export const nodeFlags = (option: string | undefined): ReadonlyArray<string> =>
  option?.split(" ").filter((flag) => flag !== "") ?? []

/** `npm start`'s server on the data directory (and database, when given), on a free loopback port; waits for /health. */
export const startServer = async (
  root: string,
  dataDir: string,
  env: Record<string, string>,
  /** Node flags the server runs with besides its own, e.g. `--cpu-prof`. */
  nodeArgs: ReadonlyArray<string> = []
): Promise<Server> => {
  const port = await freePort()
  const logFile = join(dataDir, "server.log")
  const log = openSync(logFile, "a")
  const child = spawn(process.execPath, [...nodeArgs, join(root, "bin/engram.mjs"), "serve"], {
    cwd: root,
    env: {
      ...process.env,
      SERVICE_API_DATA_DIR: dataDir,
      SERVICE_API_PORT: String(port),
      SERVICE_API_HOST: "127.0.0.1",
      ...env
    },
    stdio: ["ignore", log, log]
  })
  children.add(child)
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const logTail = () => {
    try {
      return readFileSync(logFile, "utf8").slice(-4000)
    } catch {
      return ""
    }
  }
  const deadline = Date.now() + 180_000
  while (true) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited during start-up:\n${logTail()}`)
    }
    try {
      const response = await fetch(`${url}/health`)
      await response.arrayBuffer()
      if (response.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server did not become healthy in 180 s:\n${logTail()}`)
    await sleep(100)
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      // A server holding a 100k-memory brain writes its `.brain` file as it stops (~15 s, more under `--cpu-prof`,
      // whose profile is written only at a clean exit): a minute before it is killed.
      const killed = await Promise.race([exited.then(() => true), sleep(60_000).then(() => false)])
      if (!killed) {
        child.kill("SIGKILL")
        await exited
      }
    }
    children.delete(child)
  }
  return { url, pid: child.pid!, logTail, stop }
}

/** utime + stime of a process, in seconds (clock ticks of 1/100 s on Linux). */
export const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds of every `postgres` process on the machine (the database server's share, on loopback). */
export const postgresCpuSeconds = (): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== "postgres") continue
      total += cpuSeconds(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return total
}

/** Resident memory now and at its peak, in MiB (VmRSS, VmHWM). */
export const memoryMiB = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+)`, "m"))?.[1] ?? 0)
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 }
}
