/**
 * PGlite on the event loop (`main`) against PGlite on its worker thread (`worker`), both through the real SQL layer
 * (driver, wire-protocol bridge, and for `worker` the hop between threads and pipelining), each in its own temporary
 * data dir. (a) Small queries one at a time: the hop's cost per query. (b) CPU-heavy SQL (exact top-10 cosine over
 * N × 384-d vectors, alternating with full-text ranking over the same N rows) from 4 fibers, alone, then next to
 * CPU-bound JavaScript on the event loop (2 ms slices of busy work, one macrotask each, standing in for HTTP and NLP);
 * "combined" adds each side's throughput as a share of its throughput alone (1 = one core's worth of work). Modes
 * alternate for `rounds` rounds; each figure is the median. The machine's other load decides how much a second thread
 * can gain: the table ends with the load average and the cores the process got. Rerun: `node bench/pglite-thread.ts
 * [N] [rounds] [seconds]` (defaults 5000 rows, 3 rounds, 4 s per timed phase).
 */
import { Array as Arr, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { cpus, loadavg } from "node:os"
import * as PgVector from "../layers/storage/PgVector.ts"
import * as SqlLive from "../layers/storage/SqlLive.ts"
import { tempDir } from "./support/ServerProcess.ts"

const rows = Number(process.argv[2] ?? 5000)
const rounds = Number(process.argv[3] ?? 3)
const phaseMs = Number(process.argv[4] ?? 4) * 1000
const smallQueries = 2000
const dimensions = 384
const sqlFibers = 4
/** One slice of JavaScript work on the event loop, then back to the loop. */
const sliceMs = 2

type Thread = SqlLive.PgliteThread
const threads: ReadonlyArray<Thread> = ["main", "worker"]

/** A deterministic generator, so both databases hold the same rows. */
const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 2 ** 32
}

const words = [
  "memory",
  "agent",
  "recall",
  "retain",
  "garden",
  "tomato",
  "river",
  "meeting",
  "paris",
  "coffee",
  "project",
  "deadline",
  "sister",
  "birthday",
  "guitar",
  "lesson",
  "doctor",
  "weekend",
  "hiking",
  "novel"
]

const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE docs (
    id int PRIMARY KEY,
    content text NOT NULL,
    embedding vector(${dimensions}) NOT NULL,
    search tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
  )`)
  yield* sql`CREATE INDEX docs_search_idx ON docs USING gin (search)`
  const next = random(42)
  for (let start = 0; start < rows; start += 250) {
    const row = (id: number) => ({
      id,
      content: Array.from({ length: 24 }, () => words[Math.floor(next() * words.length)]).join(" "),
      embedding: PgVector.param(Array.from({ length: dimensions }, () => next() - 0.5))
    })
    const batch = Arr.makeBy(Math.min(250, rows - start), (offset) => row(start + offset))
    yield* sql`INSERT INTO docs ${sql.insert(batch)}`
  }
  yield* sql`ANALYZE docs`
})

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

/** (a) Small queries one after another: per-query latency in microseconds (median). */
const smallQueryLatency = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const times: Array<number> = []
  for (let i = 0; i < smallQueries; i++) {
    const started = performance.now()
    yield* sql`SELECT ${i}::int AS n`
    times.push((performance.now() - started) * 1000)
  }
  return median(times)
})

const queryVector = PgVector.param(Array.from({ length: dimensions }, random(7)).map((value) => value - 0.5))

/** One heavy query: exact nearest neighbours or full-text ranking, both touching every row. */
const heavyQuery = (sql: SqlClient.SqlClient, n: number) =>
  n % 2 === 0
    ? sql`SELECT id FROM docs ORDER BY embedding <=> ${queryVector} LIMIT 10`
    : sql`SELECT id, ts_rank(search, q) AS rank FROM docs, plainto_tsquery('english', ${words[n % words.length]!}) q
          WHERE search @@ q ORDER BY rank DESC LIMIT 10`

/** Heavy queries from `sqlFibers` fibers until `deadline`: how many finished. */
const sqlLoad = (deadline: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let done = 0
    yield* Effect.forEach(Array.from({ length: sqlFibers }, (_, fiber) => fiber), (fiber) =>
      Effect.gen(function*() {
        for (let n = fiber; performance.now() < deadline; n += sqlFibers) {
          yield* heavyQuery(sql, n)
          done++
        }
      }), { concurrency: "unbounded", discard: true })
    return done
  })

/** Back to the event loop, as a request handler returns to it between requests. */
const macrotask = Effect.callback<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

/** Busy slices on the event loop until `deadline`: how many finished. */
const jsLoad = (deadline: number) =>
  Effect.gen(function*() {
    let slices = 0
    let sink = 0
    while (performance.now() < deadline) {
      const until = performance.now() + sliceMs
      while (performance.now() < until) for (let k = 1; k < 2000; k++) sink += Math.sqrt(k * slices)
      slices++
      yield* macrotask
    }
    return sink === -1 ? -1 : slices
  })

interface Figures {
  readonly smallUs: number
  readonly sqlAlone: number
  readonly sqlShared: number
  readonly jsShared: number
  /** CPU time of the whole process (every thread) over wall time while SQL and JavaScript share it. */
  readonly coresShared: number
}

const round = Effect.gen(function*() {
  const smallUs = yield* smallQueryLatency
  const sqlAlone = (yield* sqlLoad(performance.now() + phaseMs)) / (phaseMs / 1000)
  const cpu = process.cpuUsage()
  const deadline = performance.now() + phaseMs
  const [sqlShared, jsShared] = yield* Effect.all([sqlLoad(deadline), jsLoad(deadline)], { concurrency: 2 })
  const used = process.cpuUsage(cpu)
  return {
    smallUs,
    sqlAlone,
    sqlShared: sqlShared / (phaseMs / 1000),
    jsShared: jsShared / (phaseMs / 1000),
    coresShared: (used.user + used.system) / 1000 / phaseMs
  }
})

const program = Effect.gen(function*() {
  const contexts = yield* Effect.forEach(threads, (thread) =>
    Effect.gen(function*() {
      const dataDir = tempDir(`engram-bench-pglite-${thread}-`)
      const context = yield* Layer.build(SqlLive.pglite({ dataDir, thread }))
      yield* seed.pipe(Effect.provide(context))
      // Warm up: plans, caches and the JIT on both sides.
      yield* Effect.all([smallQueryLatency, sqlLoad(performance.now() + 500)]).pipe(Effect.provide(context))
      return [thread, context] as const
    }))

  const jsAlone: Array<number> = []
  const results = new Map<Thread, Array<Figures>>(threads.map((thread) => [thread, []]))
  for (let r = 0; r < rounds; r++) {
    jsAlone.push((yield* jsLoad(performance.now() + phaseMs)) / (phaseMs / 1000))
    for (const [thread, context] of r % 2 === 0 ? contexts : [...contexts].reverse()) {
      results.get(thread)!.push(yield* round.pipe(Effect.provide(context)))
    }
  }

  const js = median(jsAlone)
  const figure = (thread: Thread, key: keyof Figures) => median(results.get(thread)!.map((figures) => figures[key]))
  /** Work done while sharing, as shares of each side's rate alone: 1 is one core's worth, 2 is both cores busy. */
  const combined = (thread: Thread) =>
    figure(thread, "sqlShared") / figure(thread, "sqlAlone") + figure(thread, "jsShared") / js
  const table: ReadonlyArray<readonly [string, (thread: Thread) => number, number]> = [
    ["(a) small query, latency µs (p50)", (thread) => figure(thread, "smallUs"), 0],
    ["(b) heavy SQL alone, queries/s", (thread) => figure(thread, "sqlAlone"), 1],
    ["(b) heavy SQL beside JS, queries/s", (thread) => figure(thread, "sqlShared"), 1],
    [
      `(b) JS beside heavy SQL, ${sliceMs} ms slices/s (alone: ${js.toFixed(0)})`,
      (thread) => figure(thread, "jsShared"),
      0
    ],
    ["(b) combined, SQL share + JS share of alone", combined, 2],
    ["(b) cores the process used meanwhile", (thread) => figure(thread, "coresShared"), 2]
  ]
  console.log(
    `pglite-thread: ${rows} rows × ${dimensions}-d vectors + tsvector, ${smallQueries} small queries, ` +
      `${phaseMs / 1000} s phases, ${rounds} rounds (medians), ${sqlFibers} SQL fibers, temporary data dirs`
  )
  console.log(`load average at the end: ${loadavg().map((load) => load.toFixed(1)).join(" ")} (${cpus().length} cores)`)
  console.log("| workload | main | worker | worker/main |")
  console.log("|---|---:|---:|---:|")
  for (const [name, value, digits] of table) {
    const [main, worker] = threads.map(value) as [number, number]
    console.log(`| ${name} | ${main.toFixed(digits)} | ${worker.toFixed(digits)} | ${(worker / main).toFixed(2)} |`)
  }
})

Effect.runPromise(Effect.scoped(program)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
