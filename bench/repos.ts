/**
 * Memory repos on seeded banks (10k and 100k memories by default: real offline-extractor facts, GloVe vectors,
 * retain's link policy), over loopback HTTP against the server as a child process (`node src/main.ts`, PGlite):
 * the first commit (enable), a second commit after retaining one memory (its bytes must stay under 1 % of the
 * first's: only changed rows and bucket manifests are stored), status, a row-level diff of the two commits,
 * branch creation, and a checkout there and back. Rerun: `node bench/repos.ts [memories ...] [--commits-only]`.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { prepareDatasets } from "./support/Datasets.ts"
import { send } from "./support/LoadClient.ts"
import { removeDir, startServer } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const sizes = process.argv.slice(2).filter((arg) => /^\d+$/.test(arg)).map(Number)
const runs = sizes.length > 0 ? sizes : [10_000, 100_000]
/** `--commits-only`: stop after the commits, status and diff (branch and checkouts copy or hash the whole bank). */
const commitsOnly = process.argv.includes("--commits-only")
const bankId = "repos"
const bank = `/v1/default/banks/${bankId}`
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) => console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

const call = async (url: string, method: string, path: string, body?: unknown) => {
  const answer = await send(url, { method, path, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  if (answer.status !== 200) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
  return { ms: answer.ms, body: JSON.parse(answer.body) as any }
}

interface Row {
  readonly memories: number
  readonly rows: number
  readonly first: { ms: number; bytes: number }
  readonly second: { ms: number; bytes: number }
  readonly status: number
  readonly diff: number
  readonly diffRows: number
  readonly branch: number
  readonly checkout: number
  readonly checkoutBack: number
}

const measure = async (memories: number, dataDir: string, env: Record<string, string>): Promise<Row> => {
  log(`${memories}: starting the server`)
  const server = await startServer(root, dataDir, { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir, ...env })
  try {
    const enabled = await call(server.url, "POST", `${bank}/repos/enable`, { repo_name: "bench" })
    const repoId = enabled.body.repo_id as string
    const firstLog = await call(server.url, "GET", `/v1/default/repos/${repoId}/log`)
    const firstCommit = firstLog.body.commits[0]
    const rows = Object.values(firstCommit.stats.rows as Record<string, number>).reduce((a, b) => a + b, 0)
    log(`${memories}: first commit ${enabled.ms.toFixed(0)} ms, ${firstCommit.stats.bytes_added} bytes`)
    await call(server.url, "POST", `${bank}/memories`, {
      items: [{ content: "The repo benchmark added exactly one new memory about a lighthouse keeper in Brest." }]
    })
    const second = await call(server.url, "POST", `/v1/default/repos/${repoId}/commit`, { message: "one memory" })
    log(`${memories}: second commit ${second.ms.toFixed(0)} ms, ${second.body.stats.bytes_added} bytes`)
    const status = await call(server.url, "GET", `/v1/default/repos/${repoId}/status`)
    log(`${memories}: status ${status.ms.toFixed(0)} ms`)
    const diff = await call(
      server.url,
      "GET",
      `/v1/default/repos/${repoId}/diff?from_commit_id=${firstCommit.commit_id}&to_commit_id=${second.body.commit_id}&rows=true`
    )
    log(`${memories}: diff ${diff.ms.toFixed(0)} ms, ${diff.body.rows.total} rows`)
    const skipped = { ms: Number.NaN }
    const branch = commitsOnly ? skipped : await call(server.url, "POST", `/v1/default/repos/${repoId}/branches`, { branch_name: "side" })
    const checkout = commitsOnly ? skipped : await call(server.url, "POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "side" })
    const back = commitsOnly ? skipped : await call(server.url, "POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "main" })
    return {
      memories,
      rows,
      first: { ms: enabled.ms, bytes: firstCommit.stats.bytes_added },
      second: { ms: second.ms, bytes: second.body.stats.bytes_added },
      status: status.ms,
      diff: diff.ms,
      diffRows: diff.body.rows.total,
      branch: branch.ms,
      checkout: checkout.ms,
      checkoutBack: back.ms
    }
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server.stop()
    removeDir(dataDir)
  }
}

const main = async () => {
  const datasets = await prepareDatasets({
    root,
    backend: { name: "PGlite" },
    runs,
    bankId,
    streamSeed: 3,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log
  })
  const results: Array<Row> = []
  for (const memories of runs) {
    const dataset = datasets.take(memories)
    results.push(await measure(memories, dataset.dataDir, dataset.env))
  }
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1)
  console.log("repos: PGlite, offline GloVe, one client; times in ms (s where marked); bytes = objects newly stored")
  console.log("| memories | versioned rows | first commit | first bytes | 2nd commit (1 memory) | 2nd bytes | 2nd / 1st bytes | status | diff (rows) | branch | checkout / back |")
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of results) {
    console.log(`| ${r.memories} | ${r.rows} | ${(r.first.ms / 1000).toFixed(1)} s | ${mb(r.first.bytes)} MB | ` +
      `${r.second.ms.toFixed(0)} | ${(r.second.bytes / 1024).toFixed(1)} KB | ${(100 * r.second.bytes / r.first.bytes).toFixed(3)} % | ` +
      `${r.status.toFixed(0)} | ${r.diff.toFixed(0)} (${r.diffRows}) | ${(r.branch / 1000).toFixed(1)} s | ` +
      `${(r.checkout / 1000).toFixed(1)} s / ${(r.checkoutBack / 1000).toFixed(1)} s |`)
  }
  const failed = results.filter((r) => r.second.bytes >= r.first.bytes / 100)
  if (failed.length > 0) throw new Error(`second commit stored ≥ 1 % of the first at ${failed.map((r) => r.memories).join(", ")}`)
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
