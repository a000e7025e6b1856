/**
 * `GET {bank}/graph` at its default 1,000 nodes against a `mid` recall on the same seeded bank (100k memories by
 * default: real offline-extractor facts, GloVe vectors, retain's link policy), over loopback HTTP against the
 * server as a child process (`node src/main.ts`), one request at a time, the two kinds interleaved so the machine's
 * noise hits both. Target: graph p50 and p95 within 5× those of `mid` recall. Rerun: `node bench/graph.ts
 * [memories]`; `--before <dir>` first measures another copy of the project (e.g. the previous commit unpacked with
 * `git archive`, with a `node_modules` link) on a copy of the same bank, seeded by that copy's code.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { recallQuestions } from "./support/Conversation.ts"
import { prepareDatasets } from "./support/Datasets.ts"
import { json, percentile, send } from "./support/LoadClient.ts"
import { removeDir, startServer } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const beforeIndex = argv.indexOf("--before")
const before = beforeIndex >= 0 ? resolve(argv[beforeIndex + 1]!) : undefined
const memories = Number(
  argv.find((arg, index) => /^\d+$/.test(arg) && (beforeIndex < 0 || index !== beforeIndex + 1)) ??
    100_000
)
const samplesPerKind = 40
const bankId = "graph"
const bank = `/v1/default/banks/${bankId}`
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

const graphCall = { method: "GET", path: `${bank}/graph?limit=1000` }
const questions = recallQuestions(7, samplesPerKind + 10)
const recallCall = (n: number) => ({
  method: "POST",
  path: `${bank}/memories/recall`,
  body: JSON.stringify({ query: questions[n % questions.length]!, budget: "mid" })
})

const timed = async (url: string, call: { method: string; path: string; body?: string }) => {
  const answer = await send(url, call)
  if (answer.status !== 200) {
    throw new Error(`${call.method} ${call.path} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
  }
  return answer.ms
}

/** Graph and recall latencies on one server; the first recalls build the bank's brain and are not counted. */
const measure = async (label: string, projectRoot: string, dataDir: string) => {
  log(`${label}: starting the server`)
  const server = await startServer(projectRoot, dataDir, { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir })
  try {
    for (let n = 0; n < 10; n++) await timed(server.url, recallCall(samplesPerKind + n))
    const shape = await json(server.url, graphCall)
    for (let n = 0; n < 2; n++) await timed(server.url, graphCall)
    log(`${label}: warm; measuring`)
    const graph: Array<number> = []
    const recall: Array<number> = []
    for (let n = 0; n < samplesPerKind; n++) {
      graph.push(await timed(server.url, graphCall))
      recall.push(await timed(server.url, recallCall(n)))
    }
    return { label, graph, recall, nodes: shape.nodes.length as number, edges: shape.edges.length as number }
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server.stop()
    removeDir(dataDir)
  }
}

const main = async () => {
  const runs = before === undefined ? [memories] : [memories, memories]
  const datasets = await prepareDatasets({
    // Seeded by the older copy when there is one: the current server then adds its own migrations on start.
    root: before ?? root,
    backend: { name: "PGlite" },
    runs,
    bankId,
    streamSeed: 1,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log
  })
  const results = []
  if (before !== undefined) results.push(await measure(`before (${before})`, before, datasets.take(memories).dataDir))
  results.push(await measure("this tree", root, datasets.take(memories).dataDir))
  console.log(
    `graph: GET ${graphCall.path} vs POST recall (budget mid), ${samplesPerKind} of each, interleaved, ` +
      `one client, PGlite, offline GloVe; ${memories} memories (${datasets.sizes[0]!.links} links); ms`
  )
  console.log("| build | nodes / edges | graph p50 / p95 | recall `mid` p50 / p95 | graph / recall p50 / p95 |")
  console.log("|---|---:|---:|---:|---:|")
  for (const r of results) {
    const g = [percentile(r.graph, 0.5), percentile(r.graph, 0.95)] as const
    const m = [percentile(r.recall, 0.5), percentile(r.recall, 0.95)] as const
    console.log(
      `| ${r.label} | ${r.nodes} / ${r.edges} | ${g[0].toFixed(1)} / ${g[1].toFixed(1)} | ` +
        `${m[0].toFixed(1)} / ${m[1].toFixed(1)} | ${(g[0] / m[0]).toFixed(2)}× / ${(g[1] / m[1]).toFixed(2)}× |`
    )
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
