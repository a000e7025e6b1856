/**
 * Opens PGlite with pgvector, persisted under a data directory (created if missing) or in memory. The one way both
 * the event-loop variant and the worker thread open it, so they agree on files, extensions and settings; it does not
 * decide which thread it runs on.
 */
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { execFile } from "node:child_process"
import { access, mkdir } from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { withoutTierUp } from "./PgliteTiering.ts"
import { siblingScript } from "../../src/workers/SiblingScript.ts"

export interface PgliteOpenOptions {
  /** PostgreSQL's `shared_buffers`, e.g. `"16MB"`. Default `SERVICE_API_PGLITE_SHARED_BUFFERS`, else `"16MB"`. */
  readonly sharedBuffers?: string | undefined
}

export const openPglite = (dataDir: string | undefined, options: PgliteOpenOptions = {}): Promise<PGlite> =>
  withoutTierUp(() => open(dataDir, options))

const open = async (dataDir: string | undefined, options: PgliteOpenOptions): Promise<PGlite> => {
  const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers(options)}`]
  if (dataDir === undefined) return PGlite.create({ extensions: { vector }, startParams })
  const path = Path.resolve(dataDir)
  await mkdir(path, { recursive: true })
  if (!(await exists(Path.join(path, "PG_VERSION")))) await initdbApart(path, startParams)
  return PGlite.create({ dataDir: path, extensions: { vector }, startParams })
}

/**
 * `shared_buffers` from the options or the environment (the worker thread gets a copy of the process's; it has no
 * Effect runtime nor the caller's ConfigProvider, so this reads the variable itself). PGlite zero-fills all of it
 * as soon as it starts: the 128MB initdb writes into postgresql.conf put 100-130 MiB more into a fresh server's
 * resident memory. With 16MB a 10k-memory bank recalled as fast (bench/recall.ts, budget mid: 2.3 ms p50 against
 * 2.2; the SQL keyword strategy 16.5 ms either way) and 2,000 turns retained as fast (bench/retain.ts: 228 items/s
 * against 226); pages beyond it are read back from the operating system's file cache.
 */
const sharedBuffers = (options: PgliteOpenOptions): string => {
  const value = (options.sharedBuffers ?? process.env["SERVICE_API_PGLITE_SHARED_BUFFERS"] ?? "").trim()
  if (value === "") return "16MB"
  const match = /^(\d+)\s*(kB|MB|GB)$/.exec(value)
  const kilobytes = match === null
    ? Number.NaN
    : Number(match[1]) * unitKilobytes[match[2] as keyof typeof unitKilobytes]
  // PostgreSQL's floor is 16 pages; PGlite's 32-bit WebAssembly memory fails to start from about 2GB (1.8GB started).
  if (!(kilobytes >= 128 && kilobytes <= 1024 * 1024)) {
    throw new Error(`SERVICE_API_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB such as 16MB (got "${value}")`)
  }
  return `${match![1]}${match![2]}`
}

const unitKilobytes = { kB: 1, MB: 1024, GB: 1024 * 1024 } as const

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false)

const initdbEntry = fileURLToPath(siblingScript(import.meta.url, "pgliteInitdb"))

/**
 * Creates a new data directory in a short-lived child process (2.5 s, a 1 GiB peak, then gone). PGlite's initdb runs
 * a second, temporary PostgreSQL next to the one being opened: done in the server it raised the server's peak by
 * 350-400 MiB and left 100 MiB (worker thread) to 430 MiB (event loop) of freed-but-kept memory behind for the
 * life of the process. A first start takes 0.1-0.2 s longer. An in-memory database has no directory to hand over,
 * so it keeps initdb in-process.
 */
const initdbApart = (path: string, startParams: ReadonlyArray<string>): Promise<void> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [initdbEntry, path, JSON.stringify(startParams)],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error === null) return resolve()
        const reason = stderr.trim().split("\n").slice(-3).join(" ").trim()
        reject(new Error(`initdb failed in ${path}: ${reason === "" ? error.message : reason}`))
      }
    )
  })
