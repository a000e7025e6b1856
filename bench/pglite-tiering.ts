/**
 * What PGlite's WebAssembly tiering costs the work a test file does: a fresh PGlite on its worker thread with every
 * migration applied (each HTTP test file starts such a server), then a write-and-read workload (inserts into a table
 * with a GIN full-text index and a vector column, each followed by a full-text and a cosine query). Each mode runs in
 * a child process of its own, tier-up off (the default, `SERVICE_API_PGLITE_TIER_UP` unset) and on, alternating for
 * `rounds` rounds; the table gives each phase's CPU seconds (every thread of the child, the compiler's included) and
 * wall seconds, medians, and the ratio on/off. A last phase opens the same data dir again once closed (what a server
 * started on a copy of a migrated template would pay). CPU seconds, not wall time, because this machine is shared.
 * Rerun: `node bench/pglite-tiering.ts [rows] [rounds]` (defaults 1000 rows, 3 rounds).
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { loadavg } from "node:os"
import * as Path from "node:path"
import * as SqlLive from "../layers/storage/SqlLive.ts"
import { migrations } from "../src/storage/migrations/index.ts"
import { tempDir } from "./support/ServerProcess.ts"

const rows = Number(process.argv[2] ?? 1000)
const rounds = Number(process.argv[3] ?? 3)

interface Phases {
  readonly openCpu: number
  readonly openWall: number
  readonly workCpu: number
  readonly workWall: number
  readonly reopenCpu: number
  readonly reopenWall: number
}

const cpuSeconds = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

const migrated = (dataDir: string) =>
  Layer.build(
    PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations), table: "public.engram_migrations" }).pipe(
      Layer.provideMerge(SqlLive.pglite({ dataDir, thread: "worker" })),
      Layer.provide(NodeServices.layer)
    )
  ).pipe(Effect.flatMap((context) => Effect.provide(SqlClient.SqlClient, context)))

const child = Effect.gen(function*() {
  const wall0 = performance.now()
  const cpu0 = cpuSeconds()
  const dataDir = Path.join(tempDir("engram-tiering-"), "pglite")
  const sql = yield* migrated(dataDir)
  const wall1 = performance.now()
  const cpu1 = cpuSeconds()
  yield* sql`CREATE TABLE scratch (id int PRIMARY KEY, body text, tsv tsvector, embedding vector(64))`
  yield* sql`CREATE INDEX ON scratch USING gin (tsv)`
  const words = ["memory", "agent", "recall", "retain", "graph", "entity", "bank", "dream", "fact", "link"]
  for (let i = 0; i < rows; i++) {
    const body = Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(" ") + ` n${i}`
    const vector = `[${Array.from({ length: 64 }, (_, j) => Math.sin(i + j).toFixed(4)).join(",")}]`
    yield* sql`INSERT INTO scratch VALUES (${i}, ${body}, to_tsvector('english', ${body}), ${vector}::vector)`
    yield* sql`SELECT id FROM scratch WHERE tsv @@ plainto_tsquery('english', ${words[i % words.length]!})
      ORDER BY ts_rank(tsv, plainto_tsquery('english', ${words[i % words.length]!})) DESC LIMIT 10`
    yield* sql`SELECT id FROM scratch ORDER BY embedding <=> ${vector}::vector LIMIT 10`
  }
  return {
    openCpu: cpu1 - cpu0,
    openWall: (wall1 - wall0) / 1000,
    workCpu: cpuSeconds() - cpu1,
    workWall: (performance.now() - wall1) / 1000,
    dataDir
  }
}).pipe(Effect.scoped)

/** The same data dir opened again once closed: initdb and the migrations already done, as a copied template would be. */
const reopened = (dataDir: string) =>
  Effect.gen(function*() {
    const wall0 = performance.now()
    const cpu0 = cpuSeconds()
    const sql = yield* migrated(dataDir)
    yield* sql`SELECT count(*) FROM scratch`
    return { reopenCpu: cpuSeconds() - cpu0, reopenWall: (performance.now() - wall0) / 1000 }
  }).pipe(Effect.scoped)

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

if (process.argv[4] === "--child") {
  const run = Effect.gen(function*() {
    const { dataDir, ...first } = yield* child
    const phases: Phases = { ...first, ...(yield* reopened(dataDir)) }
    process.stdout.write(JSON.stringify(phases))
  })
  Effect.runPromise(run).then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
} else {
  const modes = [["off", "false"], ["on", "true"]] as const
  const results = new Map<string, Array<Phases>>(modes.map(([name]) => [name, []]))
  const load0 = loadavg()[0]!
  for (let round = 0; round < rounds; round++) {
    for (const [name, value] of modes) {
      const out = execFileSync(process.execPath, [process.argv[1]!, String(rows), "1", "--child"], {
        env: { ...process.env, SERVICE_API_PGLITE_TIER_UP: value },
        encoding: "utf8"
      })
      results.get(name)!.push(JSON.parse(out) as Phases)
      console.error(`round ${round + 1} tier-up ${name}: ${out}`)
    }
  }
  const row = (name: string) => {
    const r = results.get(name)!
    return (["openCpu", "openWall", "workCpu", "workWall", "reopenCpu", "reopenWall"] as const).map((phase) =>
      median(r.map((p) => p[phase]))
    )
  }
  const off = row("off")
  const on = row("on")
  console.log(
    `| tier-up | new data dir: initdb + migrate, CPU s | wall s | ${rows} writes + 2 queries each, CPU s | wall s | reopen, CPU s | wall s |`
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const [name, r] of [["off (default)", off], ["on", on]] as const) {
    console.log(`| ${name} | ${r.map((v) => v.toFixed(2)).join(" | ")} |`)
  }
  console.log(`| on / off | ${on.map((v, i) => (v / off[i]!).toFixed(2)).join(" | ")} |`)
  console.log(`load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; ${rounds} rounds`)
}
