/**
 * What one `GET {bank}/stats` costs (issue 38): `Banks.stats` on a bank of N memories (synthetic conversation facts
 * with entities and ~18 links each, `bench/support/SyntheticBank.ts`) on PGlite on the event loop, so this process's
 * CPU and `rchar` (/proc/self/io) are PGlite's. Beside it, in the same run, the statements that recount the same
 * figures from the tables (counts over every memory and link of the bank), as the baseline: a stats call should cost
 * what changed, not what the bank holds. Checks that both give the same figures.
 * Rerun: `node bench/bank-stats.ts [memories=10000] [calls=3] [dataDir]` (a dataDir that already holds the seeded
 * bank, e.g. the one `bench/sweep-slice.ts` seeded, is reused).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { Banks, engramWith, Llm } from "../src/index.ts"
import { recountStats } from "../test/support/StatsRecount.ts"
import { seedUnlessHeld } from "./support/SyntheticBank.ts"
import { tempDir } from "./support/ServerProcess.ts"

const memories = Number(process.argv[2] ?? 10_000)
const calls = Number(process.argv[3] ?? 3)
const dataDir = process.argv[4] ?? tempDir("engram-bank-stats-")
const bankId = "slice-a"

const rchar = () => Number(readFileSync("/proc/self/io", "utf8").match(/^rchar:\s+(\d+)/m)?.[1] ?? Number.NaN)
const cpu = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

const measured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const cpu0 = cpu()
    const read0 = rchar()
    const value = yield* effect
    return { value, cpu: cpu() - cpu0, mb: (rchar() - read0) / 1e6 }
  })

/** JSON with every object's keys sorted, so two figures compare whatever order their keys came in. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner)

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const banks = yield* Banks
  const held = yield* seedUnlessHeld(bankId, memories, dataDir)
  const links = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_links WHERE bank_id = ${bankId}`
  console.log(`bank ${bankId}: ${held} memories, ${links[0]?.n} links; dataDir ${dataDir}`)
  console.log("| call | GET stats CPU s | GET stats MB read | recount CPU s | recount MB read | same figures |")
  console.log("|---:|---:|---:|---:|---:|---|")
  for (let n = 1; n <= calls; n++) {
    const stats = yield* measured(banks.stats(bankId))
    const recount = yield* measured(recountStats(bankId))
    const same = canonical(recount.value) === canonical({
      nodes_by_fact_type: stats.value.nodes_by_fact_type,
      links_by_link_type: stats.value.links_by_link_type,
      links_by_fact_type: stats.value.links_by_fact_type,
      links_breakdown: stats.value.links_breakdown,
      total_documents: stats.value.total_documents,
      pending_consolidation: stats.value.pending_consolidation
    })
    console.log(
      `| ${n} | ${stats.cpu.toFixed(3)} | ${stats.mb.toFixed(1)} | ${recount.cpu.toFixed(3)} | ${
        recount.mb.toFixed(1)
      } | ${same} |`
    )
  }
}).pipe(Effect.orDie)

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
process.env["SERVICE_API_PGLITE_THREAD"] = "main"
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir }, models)))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
