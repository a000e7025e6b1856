/**
 * Graph intelligence, the state-surface summary and investigate against a `mid` recall on the same seeded bank
 * (10k memories by default: real offline-extractor facts, GloVe vectors), over loopback HTTP against the server as
 * a child process, one request at a time, interleaved with recalls so the machine's noise hits both. Each kind is
 * measured cold (a fresh parameter tuple per request, so the state graph is built: `confidence_min` moves by
 * 0.0001) and warm (the same tuple again: a cache hit). `window_days=0` reads the newest memories whatever their
 * dates. Target: cold p95 within 10× recall's p95. Rerun: `node bench/graph-intelligence.ts [memories] [samples]`.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { recallQuestions } from "./support/Conversation.ts"
import { prepareDatasets } from "./support/Datasets.ts"
import { percentile, send } from "./support/LoadClient.ts"
import { removeDir, startServer } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const numbers = process.argv.slice(2).filter((arg) => /^\d+$/.test(arg)).map(Number)
const memories = numbers[0] ?? 10_000
const samples = numbers[1] ?? 30
const bankId = "graph-intelligence"
const bank = `/v1/default/banks/${bankId}`
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

type Call = { method: string; path: string; body?: string }
const questions = recallQuestions(7, samples * 4 + 10)
const recallCall = (n: number): Call => ({
  method: "POST",
  path: `${bank}/memories/recall`,
  body: JSON.stringify({ query: questions[n % questions.length]!, budget: "mid" })
})
/**
 * A fresh tuple per `n` and kind (cold); the same again is a cache hit (warm). Kinds get their own range: investigate
 * reads the same state graph as intelligence at the same limit and would otherwise find it cached.
 */
const confidence = (n: number) => (0.55 + n * 0.0001).toFixed(4)
const kinds: Record<string, (n: number) => Call> = {
  intelligence: (n) => ({
    method: "GET",
    path: `${bank}/graph/intelligence?window_days=0&confidence_min=${confidence(n)}`
  }),
  "summary (state)": (n) => ({
    method: "GET",
    path: `${bank}/graph/summary?window_days=0&confidence_min=${confidence(n + 100)}`
  }),
  investigate: (n) => ({
    method: "POST",
    path: `${bank}/graph/investigate`,
    body: JSON.stringify({
      query: `what changed about ${questions[n % questions.length]!}`,
      window_days: 0,
      confidence_min: Number(confidence(n + 200))
    })
  })
}

const timed = async (url: string, call: Call) => {
  const answer = await send(url, call)
  if (answer.status !== 200) {
    throw new Error(`${call.method} ${call.path} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
  }
  return answer.ms
}

const main = async () => {
  const datasets = await prepareDatasets({
    root,
    backend: { name: "PGlite" },
    runs: [memories],
    bankId,
    streamSeed: 1,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log
  })
  const dataDir = datasets.take(memories).dataDir
  const server = await startServer(root, dataDir, { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir })
  try {
    for (let n = 0; n < 10; n++) await timed(server.url, recallCall(samples * 4 + n))
    for (const call of Object.values(kinds)) await timed(server.url, call(samples + 1))
    log("warm; measuring")
    const recall: Array<number> = []
    const cold: Record<string, Array<number>> = {}
    const warm: Record<string, Array<number>> = {}
    let r = 0
    for (let n = 0; n < samples; n++) {
      for (const [kind, call] of Object.entries(kinds)) {
        ;(cold[kind] ??= []).push(await timed(server.url, call(n)))
        ;(warm[kind] ??= []).push(await timed(server.url, call(n)))
        recall.push(await timed(server.url, recallCall(r++)))
      }
    }
    const m = [percentile(recall, 0.5), percentile(recall, 0.95)] as const
    console.log(
      `graph intelligence vs POST recall (budget mid), ${samples} of each kind, interleaved, one client, ` +
        `PGlite, offline GloVe; ${memories} memories; ms. recall mid p50 / p95: ${m[0].toFixed(1)} / ${m[1].toFixed(1)}`
    )
    console.log("| call | cold p50 / p95 | cold p95 / recall p95 | warm (cached) p50 / p95 |")
    console.log("|---|---:|---:|---:|")
    for (const kind of Object.keys(kinds)) {
      const c = [percentile(cold[kind]!, 0.5), percentile(cold[kind]!, 0.95)] as const
      const w = [percentile(warm[kind]!, 0.5), percentile(warm[kind]!, 0.95)] as const
      console.log(
        `| ${kind} | ${c[0].toFixed(1)} / ${c[1].toFixed(1)} | ${(c[1] / m[1]).toFixed(2)}× | ` +
          `${w[0].toFixed(1)} / ${w[1].toFixed(1)} |`
      )
    }
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server.stop()
    removeDir(dataDir)
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
