/**
 * Isolation of the expiry sweep (issue 38): bank A holds N memories (default 100k; synthetic conversation facts with
 * entities and links, `bench/support/SyntheticBank.ts`) that all expire at once; bank B (2,000 memories) is recalled
 * in sequence, first quietly — the baseline of the same run — then while the sweep deletes A's memories with their
 * derived state, slice by slice. In-process through the library on PGlite, so B's recall shares the event loop and the
 * database session with the sweep: the worst case for isolation. Target: B's recall p99 during the sweep ≤ 2 × quiet.
 * Rerun: `node bench/expiry-sweep.ts [memories]`.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../src/index.ts"
import { ExpiryWakeups } from "../src/memory/forgetting/ExpiryWakeups.ts"
import { Recall } from "../src/memory/recall/Recall.ts"
import { GraphRecall } from "../src/memory/recall/GraphRecall.ts"
import { seedBank } from "./support/SyntheticBank.ts"
import { tempDir } from "./support/ServerProcess.ts"

const memories = Number(process.argv[2] ?? 100_000)
const questions = ["Who went hiking last weekend?", "What did Ava cook?", "Where does Ben work?", "Who adopted a dog?"]
const quietSeconds = 10

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
}

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const recall = yield* Recall
  const graph = yield* GraphRecall
  const wakeups = yield* ExpiryWakeups
  const endsAt = new Date(yield* Clock.currentTimeMillis)
  const t0 = performance.now()
  yield* seedBank({ bankId: "sweep-a", memories, streamSeed: 1, endsAt, consolidated: true })
  yield* seedBank({ bankId: "sweep-b", memories: 2_000, streamSeed: 2, endsAt, consolidated: true })
  console.error(`seeded ${memories} + 2000 memories in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

  let asked = 0
  const recallB = Effect.gen(function*() {
    const start = performance.now()
    yield* recall.recall("sweep-b", { query: questions[asked++ % questions.length]!, budget: "low" })
    return performance.now() - start
  }).pipe(Effect.orDie)
  for (let i = 0; i < 20; i++) yield* recallB

  const quiet: Array<number> = []
  const quietEnd = performance.now() + quietSeconds * 1000
  while (performance.now() < quietEnd) quiet.push(yield* recallB)

  // Every memory of A expires now; the write that would set it wakes the scheduler, as retain does.
  yield* sql`UPDATE memory_units SET expires_at = now() - interval '1 second' WHERE bank_id = 'sweep-a'`
  yield* graph.changed("sweep-a")
  // The sweep's own operation is polled (one indexed row), not A's memories: a count reads every live and dead row of
  // the bank (PGlite has no autovacuum), each second, on the session and event loop the sweep and B share.
  const sweeping = sql<{ status: string }>`SELECT status FROM operations
    WHERE bank_id = 'sweep-a' AND task_type = 'expiry_sweep' ORDER BY created_at DESC LIMIT 1`.pipe(
    Effect.map((rows) => rows[0]?.status)
  )
  const sweepStart = performance.now()
  yield* wakeups.notify
  const during: Array<number> = []
  let checked = performance.now()
  let status: string | undefined
  let reported = 0
  while ((status = yield* sweeping) === undefined || status === "pending" || status === "running") {
    while (performance.now() - checked < 1000) during.push(yield* recallB)
    checked = performance.now()
    // A sweep of 100k memories under B's closed loop runs for tens of minutes: say where it stands meanwhile.
    if (during.length > 0 && Math.floor((checked - sweepStart) / 60_000) > reported) {
      reported = Math.floor((checked - sweepStart) / 60_000)
      const gone = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_logs
        WHERE bank_id = 'sweep-a' AND action = 'memories.expiry_sweep'`
      console.error(
        `${reported} min into the sweep: ${gone[0]?.n ?? 0} slices done; B's p99 so far ${
          percentile(during, 0.99).toFixed(1)
        } ms (quiet ${percentile(quiet, 0.99).toFixed(1)} ms)`
      )
    }
  }
  const sweepSeconds = (performance.now() - sweepStart) / 1000
  if (status !== "completed") throw new Error(`the expiry sweep ended ${status}`)
  const audited = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_logs
    WHERE bank_id = 'sweep-a' AND action = 'memories.expiry_sweep'`

  console.log(`expiry sweep isolation: A ${memories} expired memories, B 2,000; PGlite, in-process, offline GloVe; ms`)
  console.log("| phase | B recalls | p50 | p99 | max | p99 / quiet |")
  console.log("|---|---:|---:|---:|---:|---:|")
  const row = (name: string, samples: ReadonlyArray<number>) =>
    console.log(
      `| ${name} | ${samples.length} | ${percentile(samples, 0.5).toFixed(1)} | ${
        percentile(samples, 0.99).toFixed(1)
      } | ` +
        `${Math.max(...samples).toFixed(1)} | ${(percentile(samples, 0.99) / percentile(quiet, 0.99)).toFixed(2)}x |`
    )
  row("quiet", quiet)
  row(`during the sweep (${sweepSeconds.toFixed(1)} s, ${audited[0]?.n ?? 0} audited slices)`, during)
}).pipe(Effect.orDie)

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir: tempDir("engram-expiry-sweep-") }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
