/**
 * What `purge_history` costs (issue 38): two banks seeded alike (N synthetic conversation memories, default 2,000,
 * `bench/support/SyntheticBank.ts`), each put under a memory repo with three commits; then one entity ("Kyoto") is
 * forgotten in one bank without `purge_history` and in the other with it. Both forgets delete the same memories and
 * derived state; the difference is the history rewrite (reading every tree's rows, rebuilding leaves, nodes,
 * manifests and commits, deleting the replaced objects). In-process through the library on PGlite; the ratio of the
 * two is the figure (same run, same machine). Rerun: `node bench/purge-history.ts [memories]`.
 */
import { Clock, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../src/index.ts"
import { Forget } from "../src/memory/forgetting/Forget.ts"
import { MemoryRepos } from "../src/repos/MemoryRepos.ts"
import { seedBank } from "./support/SyntheticBank.ts"
import { tempDir } from "./support/ServerProcess.ts"

const memories = Number(process.argv[2] ?? 2_000)
const entity = "Kyoto"

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
  const plain = yield* timed(forget.forget("purge-plain", { entity }))
  const purged = yield* timed(forget.forget("purge-rewrite", { entity, purge_history: true }))

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
}).pipe(Effect.orDie)

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir: tempDir("engram-purge-history-") }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
