/**
 * Child-process entry of bench/repos-enable.ts: on a seeded data directory nobody else has open, either enables a
 * memory repo the way the service does (`MemoryRepos.enable`, in slices) or stores the bank's whole state in one
 * transaction (`Snapshots.capture`, what the first enable did before it was sliced). Prints one JSON line.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { GloveEmbeddingsLive } from "../../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../../src/index.ts"
import { MemoryRepos } from "../../src/repos/MemoryRepos.ts"
import { Snapshots } from "../../src/repos/Snapshots.ts"

const [mode, dataDir, bankId] = process.argv.slice(2) as [string, string, string]

const run = Effect.gen(function*() {
  const started = performance.now()
  if (mode === "one-transaction") {
    const sql = yield* SqlClient.SqlClient
    const snapshots = yield* Snapshots
    const capture = yield* sql.withTransaction(snapshots.capture({ bankId, workspace: false }, {}))
    return { mode, ms: performance.now() - started, rootHash: capture.rootHash }
  }
  const repos = yield* MemoryRepos
  const summary = yield* repos.enable(bankId, "bench")
  const status = yield* repos.status(summary.repo_id, undefined)
  return { mode, ms: performance.now() - started, dirty: status.dirty }
}).pipe(
  Effect.provide(
    engramWith(
      { dataDir, enableObservations: false },
      Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
    )
  )
)

Effect.runPromise(run as Effect.Effect<unknown>).then(
  (result) => {
    process.stdout.write(JSON.stringify(result) + "\n")
    process.exit(0)
  },
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
