/**
 * Loaded into a server child with `--import` by `bench/memory.ts`: on SIGUSR2 it writes, to the file named by
 * ENGRAM_MEMORY_REPORT, where the process's resident memory is — the main thread's V8 heap by space, the heaps of
 * its worker threads (PGlite's among them), memory outside the heaps (`external`, array buffers), and the process's
 * mappings from /proc/self/smaps grouped by what backs them (the node binary, other files, anonymous memory) — and
 * which modules are loaded. Read from inside the process because nothing outside it can see how V8 uses its heap.
 * Never loaded by the server itself.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { createRequire, registerHooks, syncBuiltinESMExports } from "node:module"
import { getHeapSpaceStatistics } from "node:v8"

const require = createRequire(import.meta.url)
const threads = require("node:worker_threads") as typeof import("node:worker_threads")
const workers = new Set<import("node:worker_threads").Worker>()
const Original = threads.Worker
// Tracks every worker the server starts, so its heap can be asked for; behaves exactly like the original.
class TrackedWorker extends Original {
  constructor(...args: ConstructorParameters<typeof Original>) {
    super(...args)
    workers.add(this)
    this.once("exit", () => workers.delete(this))
  }
}
threads.Worker = TrackedWorker as typeof Original
syncBuiltinESMExports()

/** Every module URL resolved (ESM and CommonJS), so the report can say which packages a route made load. */
const loaded = new Set<string>()
registerHooks({
  resolve: (specifier, context, next) => {
    const resolved = next(specifier, context)
    loaded.add(resolved.url)
    return resolved
  }
})

const mib = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10

/** Resident kB of /proc/self/smaps grouped by the mapping's backing: the executable, other files, anonymous. */
const mappings = () => {
  const groups = new Map<string, number>()
  let name = ""
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (head !== null) {
      const path = head[1]!.trim()
      name = path === ""
        ? "[anonymous]"
        : path === process.execPath
        ? "[node binary]"
        : path.startsWith("[")
        ? path
        : `file ${path}`
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss !== null) groups.set(name, (groups.get(name) ?? 0) + Number(rss[1]))
  }
  return Object.fromEntries(
    [...groups].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([key, kb]) => [key, Math.round(kb / 102.4) / 10])
  )
}

const report = async () => {
  const usage = process.memoryUsage()
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((space) => [space.space_name, mib(space.space_used_size)])
  )
  const workerHeaps = await Promise.all([...workers].map(async (worker) => {
    const stats = await worker.getHeapStatistics()
    return { used: mib(stats.used_heap_size), total: mib(stats.total_heap_size), external: mib(stats.external_memory) }
  }))
  // Source text stays in the heap for as long as the module is loaded: one byte a character when the file is all
  // Latin-1, two bytes otherwise (one "—" in a comment is enough).
  const packages = new Map<string, { files: number; sourceMiB: number }>()
  // The project's own modules and effect's, by folder: which features a fresh server has loaded.
  const folders = new Map<string, { files: number; sourceMiB: number }>()
  for (const url of loaded) {
    if (!url.startsWith("file:") || !/\.(c?js|mjs|ts)$/.test(url)) continue
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
    const owner = match === null ? "(project)" : match[1]!
    let bytes = 0
    try {
      const text = readFileSync(fileURLToPath(url), "utf8")
      bytes = /[^\u0000-\u00ff]/.test(text) ? 2 * text.length : text.length
    } catch {
      // not a file (a directory import resolved elsewhere)
    }
    const entry = packages.get(owner) ?? { files: 0, sourceMiB: 0 }
    entry.files++
    entry.sourceMiB += bytes / 1048576
    packages.set(owner, entry)
    const folder = owner === "(project)"
      ? /\/((?:src|layers|ui|bench)\/[^/]+)/.exec(url)?.[1]
      : owner === "effect"
      ? `effect/${/\/dist\/(.+)\/[^/]+$/.exec(url)?.[1] ?? "."}`
      : undefined
    if (folder !== undefined) {
      const counted = folders.get(folder) ?? { files: 0, sourceMiB: 0 }
      counted.files++
      counted.sourceMiB += bytes / 1048576
      folders.set(folder, counted)
    }
  }
  return {
    rss: mib(usage.rss),
    heapUsed: mib(usage.heapUsed),
    heapTotal: mib(usage.heapTotal),
    external: mib(usage.external),
    arrayBuffers: mib(usage.arrayBuffers),
    spaces,
    workers: workerHeaps,
    mappings: mappings(),
    modules: loaded.size,
    packages: Object.fromEntries(
      [...packages].sort((a, b) => b[1].sourceMiB - a[1].sourceMiB).map((
        [name, entry]
      ) => [name, { files: entry.files, sourceMiB: Math.round(entry.sourceMiB * 10) / 10 }])
    ),
    folders: Object.fromEntries(
      [...folders].sort((a, b) => b[1].sourceMiB - a[1].sourceMiB).map((
        [name, entry]
      ) => [name, { files: entry.files, sourceKiB: Math.round(entry.sourceMiB * 1024) }])
    )
  }
}

process.on("SIGUSR2", () => {
  const target = process.env["ENGRAM_MEMORY_REPORT"]
  if (target === undefined) return
  report().then(
    (value) => writeFileSync(target, JSON.stringify(value)),
    (error) => writeFileSync(target, JSON.stringify({ error: String(error) }))
  )
})
