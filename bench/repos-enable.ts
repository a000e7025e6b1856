/**
 * The first enable of a memory repo in bounded slices against the same work in one transaction (hashing and storing
 * the bank's whole state, as the enable did before it was sliced), on fresh copies of one seeded bank (PGlite,
 * offline GloVe), alternated, each in a process of its own: the ratio is the figure (issue 36 asks ≤ 1.2×), since a
 * shared 2-core machine moves single runs by 2–3×. Rerun: `node bench/repos-enable.ts [memories] [rounds]`.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { prepareDatasets } from "./support/Datasets.ts"
import { removeDir, runScript } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const [memories, rounds] = [Number(process.argv[2] ?? 2_000), Number(process.argv[3] ?? 2)]
const bankId = "repos"
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const env = { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir }
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

const main = async () => {
  const datasets = await prepareDatasets({
    root,
    backend: { name: "PGlite" },
    runs: Array.from({ length: 2 * rounds }, () => memories),
    bankId,
    streamSeed: 3,
    env,
    log
  })
  const rows: Array<{ round: number; one: number; sliced: number }> = []
  for (let round = 1; round <= rounds; round++) {
    const times: Record<string, number> = {}
    // Alternate which goes first, so a load that rises or falls through the round favours neither.
    const order = round % 2 === 1 ? ["one-transaction", "sliced"] : ["sliced", "one-transaction"]
    for (const mode of order) {
      const dataset = datasets.take(memories)
      try {
        const out = await runScript(root, "bench/support/repoEnableRun.ts", [mode, dataset.dataDir, bankId], env)
        const result = JSON.parse(out.trim().split("\n").at(-1)!) as { ms: number; dirty?: boolean }
        if (result.dirty === true) throw new Error("the sliced enable left the workspace dirty")
        times[mode] = result.ms
        log(`round ${round}: ${mode} ${(result.ms / 1000).toFixed(1)} s`)
      } finally {
        removeDir(dataset.dataDir)
      }
    }
    rows.push({ round, one: times["one-transaction"]!, sliced: times["sliced"]! })
  }
  console.log(
    `repos-enable: PGlite, ${memories} memories, ${rounds} rounds alternated, each run a fresh copy in its own process`
  )
  console.log("| round | one transaction | sliced | sliced / one transaction |")
  console.log("|---:|---:|---:|---:|")
  for (const r of rows) {
    console.log(
      `| ${r.round} | ${(r.one / 1000).toFixed(1)} s | ${(r.sliced / 1000).toFixed(1)} s | ${
        (r.sliced / r.one).toFixed(2)
      }× |`
    )
  }
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0)
  console.log(
    `| all | ${(sum((r) => r.one) / 1000).toFixed(1)} s | ${(sum((r) => r.sliced) / 1000).toFixed(1)} s | ${
      (sum((r) => r.sliced) / sum((r) => r.one)).toFixed(2)
    }× |`
  )
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
