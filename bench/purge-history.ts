/**
 * What `purge_history` costs (issue 38): two banks seeded alike (N synthetic conversation memories, default 2,000,
 * `bench/support/SyntheticBank.ts`), each put under a memory repo with three commits; then one entity ("Kyoto") is
 * forgotten in one bank without `purge_history` and in the other with it. Both forgets delete the same memories and
 * derived state; the difference is the history rewrite (reading every tree's rows, rebuilding leaves, nodes,
 * manifests and commits, deleting the replaced objects). In-process through the library on PGlite; the ratio of the
 * two is the figure (same run, same machine). Beside the purge, a bank B (1,000 memories) is recalled in a loop (its
 * brain answers) and read by one small SQL statement in another: each one's p99 during the purge against quiet shows
 * what the purge holds up on PGlite's one session. Rerun: `node bench/purge-history.ts [memories] [--alone]`
 * (`--alone`: without bank B, the forgets' own cost).
 */
import { Clock, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../src/index.ts"
import { Forget } from "../src/memory/forgetting/Forget.ts"
import { Recall } from "../src/memory/recall/Recall.ts"
import { MemoryRepos } from "../src/repos/MemoryRepos.ts"
import { percentile } from "./support/LoadClient.ts"
import { seedBank } from "./support/SyntheticBank.ts"
import { tempDir } from "./support/ServerProcess.ts"

const memories = Number(process.argv[2] ?? 2_000)
/** `--alone`: no bank B beside the forgets (their own cost, without sharing PGlite's session with B's work). */
const alone = process.argv.includes("--alone")
const entity = "Kyoto"
const questions = ["Who went hiking last weekend?", "What did Ava cook?", "Where does Ben work?", "Who adopted a dog?"]

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repos = yield* MemoryRepos
  const forget = yield* Forget
  const endsAt = new Date(yield* Clock.currentTimeMillis)
  const versioned = (bankId: string) =>
    Effect.gen(function*() {
      yield* seedBank({ bankId, memories, streamSeed: 7, endsAt, consolidated: true })
      const repo = yield* repos.enable(bankId, null)
      for (const round of [1, 2]) {
        // A small change per commit: a few memories get a context.
        yield* sql`UPDATE memory_units SET context = ${`round ${round}`}
          WHERE id IN (SELECT id FROM memory_units WHERE bank_id = ${bankId} ORDER BY id LIMIT 5 OFFSET ${round * 5})`
        yield* repos.commit(repo.repo_id, { message: `round ${round}` })
      }
    })
  const t0 = performance.now()
  yield* versioned("purge-plain")
  yield* versioned("purge-rewrite")
  const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM repo_objects WHERE kind = 'row'`
  console.error(`seeded and versioned 2 x ${memories} memories in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

  const timed = <A>(effect: Effect.Effect<A, unknown>) =>
    Effect.gen(function*() {
      const start = performance.now()
      const result = yield* effect
      return { result, ms: performance.now() - start }
    })
  yield* seedBank({ bankId: "purge-b", memories: 1_000, streamSeed: 9, endsAt, consolidated: true })

  // Bank B beside the forgets: a recall loop (answered by its brain) and a loop of one small SQL read.
  const recall = yield* Recall
  let asked = 0
  const recallB = Effect.gen(function*() {
    const start = performance.now()
    yield* recall.recall("purge-b", { query: questions[asked++ % questions.length]!, budget: "low" })
    return performance.now() - start
  }).pipe(Effect.orDie)
  const readB = Effect.gen(function*() {
    const start = performance.now()
    yield* sql`SELECT id FROM memory_units WHERE bank_id = 'purge-b' ORDER BY created_at DESC LIMIT 1`
    yield* Effect.sleep("5 millis")
    return performance.now() - start - 5
  }).pipe(Effect.orDie)
  for (let i = 0; i < 20; i++) yield* recallB
  /** B's recall and read latencies while `work` runs, and the work's result and time. */
  const beside = <A>(work: Effect.Effect<A, unknown>) =>
    Effect.gen(function*() {
      let running = true
      const loop = (probe: Effect.Effect<number>) =>
        Effect.gen(function*() {
          const samples: Array<number> = []
          while (running) samples.push(yield* probe)
          return samples
        })
      const recalls = yield* Effect.forkChild(alone ? Effect.succeed([0]) : loop(recallB))
      const reads = yield* Effect.forkChild(alone ? Effect.succeed([0]) : loop(readB))
      const result = yield* timed(work)
      running = false
      return { result, recalls: yield* Fiber.join(recalls), reads: yield* Fiber.join(reads) }
    })
  const quiet = yield* beside(Effect.sleep("5 seconds"))
  const plainRun = yield* beside(forget.forget("purge-plain", { entity }))
  const purgedRun = yield* beside(forget.forget("purge-rewrite", { entity, purge_history: true }))
  const plain = plainRun.result
  const purged = purgedRun.result

  console.log(
    `purge_history cost: 2 banks x ${memories} memories, 3 commits each, ${
      rows[0]?.n
    } row objects stored; PGlite, in-process`
  )
  console.log("| forget of the entity | memories forgotten | time (ms) | commits rewritten | objects deleted | ratio |")
  console.log("|---|---:|---:|---:|---:|---:|")
  console.log(`| without purge_history | ${plain.result.removed.memories} | ${plain.ms.toFixed(0)} | 0 | 0 | 1.00x |`)
  console.log(
    `| with purge_history | ${purged.result.removed.memories} | ${purged.ms.toFixed(0)} | ` +
      `${purged.result.repo_commits.rewrites?.length ?? 0} | ${purged.result.repo_commits.objects_deleted ?? 0} | ${
        (purged.ms / plain.ms).toFixed(2)
      }x |`
  )
  if (alone) return
  console.log("")
  console.log("bank B beside each forget (1,000 memories): p50 / p99 / max, ms")
  console.log("| while | B's recalls | recall p50 / p99 / max | p99 / quiet | B's SQL reads | read p50 / p99 / max |")
  console.log("|---|---:|---:|---:|---:|---:|")
  const figures = (samples: ReadonlyArray<number>) =>
    `${percentile(samples, 0.5).toFixed(1)} / ${percentile(samples, 0.99).toFixed(1)} / ${
      Math.max(...samples).toFixed(1)
    }`
  for (
    const [name, run] of [["quiet", quiet], ["forget", plainRun], ["forget with purge_history", purgedRun]] as const
  ) {
    console.log(
      `| ${name} | ${run.recalls.length} | ${figures(run.recalls)} | ${
        (percentile(run.recalls, 0.99) / percentile(quiet.recalls, 0.99)).toFixed(2)
      }x | ${run.reads.length} | ${figures(run.reads)} |`
    )
  }
}).pipe(Effect.orDie)

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir: tempDir("engram-purge-history-") }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
