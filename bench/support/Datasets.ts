/**
 * Seeded starting points for benchmark servers: every server run gets a fresh bank of its size. On PGlite each
 * size is seeded once (in a child process) and its data directory copied per run; on PostgreSQL each run gets
 * its own schema, seeded up front and dropped at the end. Seeding runs two children at a time, one per core.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { removeDir, runScript, tempDir } from "./ServerProcess.ts"
import type { DropJob, SeedJob } from "./seed.ts"

export interface Backend {
  readonly name: string
  /** PostgreSQL URL; none for embedded PGlite. */
  readonly url?: string
}

export interface Dataset {
  readonly dataDir: string
  /** What the server needs besides the data directory to find the seeded bank. */
  readonly env: Record<string, string>
  readonly memories: number
  readonly links: number
  /** A held bank (`heldDir`): used in place, kept after the run, not removed. */
  readonly held: boolean
}

interface SeedResult {
  readonly bankId: string
  readonly memories: number
  readonly links: number
  readonly seconds: number
}

interface Task {
  readonly memories: number
  readonly dataDir: string
  readonly schema: string | undefined
  remainingRuns: number
  readonly held: boolean
  result?: SeedResult
}

export const prepareDatasets = async (options: {
  readonly root: string
  readonly backend: Backend
  /** The bank size of each server run, in the order the runs will `take` them. */
  readonly runs: ReadonlyArray<number>
  readonly bankId: string
  readonly streamSeed: number
  readonly env: Record<string, string>
  readonly log: (message: string) => void
  /**
   * Keep each size's seeded bank here and reuse it (`--bank-dir`): seeded once, then used in place by every run
   * (not copied; what a run does to it stays), on PostgreSQL as the schema `engram_held_<bank>_<size>`.
   */
  readonly heldDir?: string
}) => {
  const { root, backend, runs } = options
  const heldDir = options.heldDir
  const heldSchema = (memories: number) => `engram_held_${options.bankId.replaceAll("-", "_")}_${memories}`
  const marker = (task: Task) => join(task.dataDir, "seeded.json")
  // The seeded history ends shortly before the load starts, as a live bank's would.
  const endsAt = new Date(Date.now() - 10 * 60_000).toISOString()
  const tasks: Array<Task> = heldDir !== undefined
    ? [...new Set(runs)].map((memories) => ({
      memories,
      dataDir: join(heldDir, `${backend.url === undefined ? "pglite" : "postgres"}-${options.bankId}-${memories}`),
      schema: backend.url === undefined ? undefined : heldSchema(memories),
      remainingRuns: runs.filter((run) => run === memories).length,
      held: true
    }))
    : backend.url === undefined
    ? [...new Set(runs)].map((memories) => ({
      memories,
      dataDir: tempDir(`engram-load-seed-${memories}-`),
      schema: undefined,
      remainingRuns: runs.filter((run) => run === memories).length,
      held: false
    }))
    : runs.map((memories, index) => ({
      memories,
      dataDir: tempDir(`engram-load-pg-${memories}-`),
      schema: `engram_load_${Date.now().toString(36)}_${index}`,
      remainingRuns: 1,
      held: false
    }))
  const seed = async (task: Task) => {
    if (task.held && existsSync(marker(task))) {
      task.result = JSON.parse(readFileSync(marker(task), "utf8")) as SeedResult
      options.log(`held bank of ${task.memories} memories in ${task.dataDir}: not seeded again`)
      return
    }
    if (task.held) {
      // A seed that did not finish: start it again from nothing.
      rmSync(task.dataDir, { recursive: true, force: true })
      if (task.schema !== undefined) {
        execFileSync("psql", [backend.url!, "-q", "-c", `DROP SCHEMA IF EXISTS "${task.schema}" CASCADE`])
      }
      mkdirSync(task.dataDir, { recursive: true })
    }
    const job: SeedJob = {
      dataDir: task.dataDir,
      endsAt,
      ...(backend.url === undefined ? {} : { databaseUrl: backend.url, databaseSchema: task.schema! }),
      banks: [{ bankId: options.bankId, memories: task.memories, streamSeed: options.streamSeed, consolidated: true }]
    }
    const stdout = await runScript(root, "bench/support/seed.ts", [JSON.stringify(job)], options.env)
    const [result] = JSON.parse(stdout.trim().split("\n").at(-1)!) as Array<SeedResult>
    options.log(`seeded ${task.memories} memories (${result!.links} links) in ${result!.seconds.toFixed(0)} s`)
    task.result = result!
    if (task.held) writeFileSync(marker(task), JSON.stringify(result))
  }

  // The largest bank alone on one lane when it outweighs the rest, which share the other.
  const lanes: [Array<Task>, Array<Task>] = [[], []]
  const work = [0, 0]
  for (const task of [...tasks].sort((a, b) => b.memories - a.memories)) {
    const lane = work[0]! <= work[1]! ? 0 : 1
    lanes[lane].push(task)
    work[lane]! += task.memories
  }
  const started = performance.now()
  await Promise.all(lanes.map(async (lane) => {
    for (const task of lane) await seed(task)
  }))
  const seedSeconds = (performance.now() - started) / 1000

  /** The next fresh copy of a bank of this size, for one server run. */
  const take = (memories: number): Dataset => {
    const task = tasks.find((t) => t.memories === memories && t.remainingRuns > 0)
    if (task === undefined) throw new Error(`no seeded bank of ${memories} memories left`)
    task.remainingRuns--
    const { memories: count, links } = task.result!
    if (backend.url !== undefined) {
      return {
        dataDir: task.dataDir,
        env: { SERVICE_API_DATABASE_URL: backend.url, SERVICE_API_DATABASE_SCHEMA: task.schema! },
        memories: count,
        links,
        held: task.held
      }
    }
    if (task.held) return { dataDir: task.dataDir, env: {}, memories: count, links, held: true }
    const dataDir = tempDir(`engram-load-run-${memories}-`)
    cpSync(task.dataDir, dataDir, { recursive: true })
    if (task.remainingRuns === 0) removeDir(task.dataDir)
    return { dataDir, env: {}, memories: count, links, held: false }
  }

  const sizes = [...new Set(runs)].map((memories) => {
    const { result } = tasks.find((t) => t.memories === memories)!
    return { memories: result!.memories, links: result!.links }
  })

  const dropSchemas = async () => {
    if (backend.url === undefined || heldDir !== undefined) return
    const job: DropJob = { databaseUrl: backend.url, dropSchemas: tasks.map((task) => task.schema!) }
    await runScript(root, "bench/support/seed.ts", [JSON.stringify(job)], options.env)
  }

  return { take, seedSeconds, sizes, dropSchemas }
}
