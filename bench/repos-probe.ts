/**
 * Where each memory-repo operation's time goes, in process, on a held bank that `node bench/repos.ts N --bank-dir
 * DIR` seeded and enabled (PGlite data directory `DIR/pglite-repos-N`, or on PostgreSQL with `BENCH_DATABASE_URL`
 * the schema `engram_held_repos_N`): the bench's sequence (retain one memory, status, commit, clean status, diff of
 * the two commits, branch, checkout there and back, ten memories committed on the branch, checkout between the
 * two, one uncommitted memory and a hard reset), each with its wall time, its SQL statements counted and timed by a
 * tracer, and the slowest statements. Observations are off and nothing else runs in the process, so the figures are
 * the repo code's own. Leaves the bank on `main` with its branch deleted, as the bench does.
 * Rerun: `node bench/repos-probe.ts DIR [memories]`.
 */
import { Effect, Layer, Option, Redacted, Tracer } from "effect"
import { join, resolve } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Llm, Retain } from "../src/index.ts"
import { MemoryRepos } from "../src/repos/MemoryRepos.ts"

const dir = resolve(process.argv[2] ?? "/tmp/h36e-banks")
const memories = Number(process.argv[3] ?? 10_000)
const bankId = "repos"
const databaseUrl = process.env["BENCH_DATABASE_URL"]

/** ms and calls per statement label within the current operation. */
let statements = new Map<string, { calls: number; ms: number }>()
const label = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 140)
class TimedSpan extends Tracer.NativeSpan {
  override end(endTime: bigint, exit: Parameters<Tracer.NativeSpan["end"]>[1]) {
    const text = this.attributes.get("db.query.text")
    if (typeof text === "string") {
      const key = label(text)
      const entry = statements.get(key) ?? { calls: 0, ms: 0 }
      entry.calls++
      entry.ms += Number(endTime - this.startTime) / 1e6
      statements.set(key, entry)
    }
    super.end(endTime, exit)
  }
}
const tracer = Tracer.make({ span: (options) => new TimedSpan(options) })

const results: Array<{ op: string; ms: number; calls: number; sqlMs: number }> = []
const timed = <A, E, R>(op: string, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    statements = new Map()
    const started = performance.now()
    const value = yield* effect.pipe(Effect.withTracer(tracer))
    const ms = performance.now() - started
    const all = [...statements.values()]
    const calls = all.reduce((n, s) => n + s.calls, 0)
    const sqlMs = all.reduce((n, s) => n + s.ms, 0)
    results.push({ op, ms, calls, sqlMs })
    console.error(`\n${op}: ${ms.toFixed(0)} ms, ${calls} statements (${sqlMs.toFixed(0)} ms in SQL)`)
    for (const [key, s] of [...statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6)) {
      console.error(`  ${s.ms.toFixed(1).padStart(8)} ms ${String(s.calls).padStart(4)}× ${key}`)
    }
    return value
  })

const program = Effect.gen(function*() {
  const repos = yield* MemoryRepos
  const retain = yield* Retain
  const summary = yield* repos.forBank(bankId)
  if (summary === null) return yield* Effect.die(new Error("the held bank has no repo: run bench/repos.ts first"))
  const repoId = summary.repo_id
  if (summary.active_branch !== "main") yield* repos.checkout(repoId, "main")
  const first = (yield* repos.log(repoId, { limit: 1 })).commits[0]!
  const side = `probe-${Date.now().toString(36)}`
  // New words every run: the same sentence again would be skipped as a duplicate (and nothing would be committed).
  const n = Math.floor(Date.now() / 1000)
  const job = ["ferryman", "glassblower", "cartographer", "beekeeper", "stonemason", "falconer", "tanner"][n % 7]!
  const town = [
    "Galway",
    "Tromsø",
    "Porto",
    "Gdańsk",
    "Valletta",
    "Hobart",
    "Kotor",
    "Reykjavik"
  ][Math.floor(n / 7) % 8]!
  yield* timed(
    "retain one memory",
    retain.retainNow(bankId, {
      items: [{ content: `The repo probe added exactly one new memory about a ${job} in ${town}.` }]
    })
  )
  yield* timed("status after one memory", repos.status(repoId, undefined))
  const second = yield* timed("commit of one memory", repos.commit(repoId, { message: "probe: one memory" }))
  yield* timed("clean status", repos.status(repoId, undefined))
  yield* timed(
    "diff of the two commits",
    repos.diff(repoId, { from_commit_id: first.commit_id, to_commit_id: second.commit_id, rows: true })
  )
  yield* timed("branch creation", repos.createBranch(repoId, { branch_name: side }))
  yield* timed("checkout (equal)", repos.checkout(repoId, side))
  yield* timed("checkout back (equal)", repos.checkout(repoId, "main"))
  yield* repos.checkout(repoId, side)
  yield* timed(
    "retain ten memories",
    retain.retainNow(bankId, {
      items: Array.from(
        { length: 10 },
        (_, i) => ({ content: `Probe side note ${i}: ${job} ${i} repainted the lamp room in ${town}.` })
      )
    })
  )
  yield* timed("commit of ten memories", repos.commit(repoId, { message: "probe: ten memories" }))
  yield* timed("checkout between branches 10 memories apart", repos.checkout(repoId, "main"))
  yield* retain.retainNow(bankId, {
    items: [{ content: `An uncommitted probe note the reset throws away, about a ${job} in ${town}.` }]
  })
  yield* timed("hard reset of one memory", repos.resetHard(repoId, { commit_id: second.commit_id, force: true }))
  yield* repos.deleteBranch(repoId, side)
  console.log(`\nrepos-probe: ${databaseUrl === undefined ? "PGlite" : "PostgreSQL"}, ${memories} memories, in process`)
  console.log("| operation | ms | statements | ms in SQL |\n|---|---:|---:|---:|")
  for (const r of results) {
    console.log(`| ${r.op} | ${r.ms.toFixed(0)} | ${r.calls} | ${r.sqlMs.toFixed(0)} |`)
  }
})

const settings = databaseUrl === undefined
  ? { dataDir: join(dir, `pglite-${bankId}-${memories}`) }
  : {
    dataDir: join(dir, `postgres-${bankId}-${memories}`),
    databaseUrl: Option.some(Redacted.make(databaseUrl)),
    databaseSchema: `engram_held_${bankId}_${memories}`
  }

Effect.runPromise(
  program.pipe(
    Effect.provide(
      engramWith(
        { ...settings, enableObservations: false },
        Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
      )
    )
  ) as Effect.Effect<void>
).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
