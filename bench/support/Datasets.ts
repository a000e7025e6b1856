/**
 * Seeded starting points for benchmark servers: every server run gets a fresh bank of its size. On PGlite each
 * size is seeded once (in a child process) and its data directory copied per run; on PostgreSQL each run gets
 * its own schema, seeded up front and dropped at the end. Seeding runs two children at a time, one per core.
 */
import { cpSync } from "node:fs"
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
}) => {
  const { root, backend, runs } = options
  // The seeded history ends shortly before the load starts, as a live bank's would.
  const endsAt = new Date(Date.now() - 10 * 60_000).toISOString()
  const tasks: Array<Task> = backend.url === undefined
    ? [...new Set(runs)].map((memories) => ({
      memories,
      dataDir: tempDir(`engram-load-seed-${memories}-`),
      schema: undefined,
      remainingRuns: runs.filter((run) => run === memories).length
    }))
    : runs.map((memories, index) => ({
      memories,
      dataDir: tempDir(`engram-load-pg-${memories}-`),
      schema: `engram_load_${Date.now().toString(36)}_${index}`,
      remainingRuns: 1
    }))
  const seed = async (task: Task) => {
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
        links
      }
    }
    const dataDir = tempDir(`engram-load-run-${memories}-`)
    cpSync(task.dataDir, dataDir, { recursive: true })
    if (task.remainingRuns === 0) removeDir(task.dataDir)
    return { dataDir, env: {}, memories: count, links }
  }

  const sizes = [...new Set(runs)].map((memories) => {
    const { result } = tasks.find((t) => t.memories === memories)!
    return { memories: result!.memories, links: result!.links }
  })

  const dropSchemas = async () => {
    if (backend.url === undefined) return
    const job: DropJob = { databaseUrl: backend.url, dropSchemas: tasks.map((task) => task.schema!) }
    await runScript(root, "bench/support/seed.ts", [JSON.stringify(job)], options.env)
  }

  return { take, seedSeconds, sizes, dropSchemas }
}
