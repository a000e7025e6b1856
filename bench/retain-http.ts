/**
 * Retain throughput over HTTP the way agents send it: batches of 100 conversation turns (`POST {bank}/memories`,
 * observations off) from `--clients` concurrent clients into their own banks, against `node src/main.ts` with
 * embedded PGlite on its worker thread and on the event loop, alternating for `--rounds` rounds in one run, each
 * server on a fresh data directory; `--pg <url>` (or ENGRAM_BENCH_DATABASE_URL) adds PostgreSQL. Reports items/s per
 * round, the median per configuration, and worker / event loop (the target: ≥ 1).
 * Rerun: `node bench/retain-http.ts [--items 3000] [--clients 1,4] [--rounds 2] [--pg <url>]`.
 */
import { join, resolve } from "node:path"
import { tmpdir } from "node:os"
import { turnAt } from "./support/Conversation.ts"
import { send } from "./support/LoadClient.ts"
import { startServer, tempDir, tempSchema } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const option = (name: string) => {
  const index = argv.indexOf(`--${name}`)
  return index >= 0 ? argv[index + 1] : undefined
}
const items = Number(option("items") ?? 3000)
const clientCounts = (option("clients") ?? "1,4").split(",").map(Number).filter((n) => n > 0)
const rounds = Number(option("rounds") ?? 2)
const pg = option("pg") ?? process.env["ENGRAM_BENCH_DATABASE_URL"]
const batch = 100
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")

type Setup = { readonly name: string; readonly env: () => Record<string, string> }

const setups: ReadonlyArray<Setup> = [
  { name: "PGlite on its worker", env: () => ({ SERVICE_API_PGLITE_THREAD: "worker" }) },
  { name: "PGlite on the event loop", env: () => ({ SERVICE_API_PGLITE_THREAD: "main" }) },
  ...(pg === undefined ? [] : [{
    name: "PostgreSQL",
    env: () => ({ SERVICE_API_DATABASE_URL: pg, SERVICE_API_DATABASE_SCHEMA: tempSchema(pg, "bench_retain_http_") })
  }])
]

/** Items retained per second by `clients` clients, each into its own bank, `items` in all. */
const measure = async (setup: Setup, clients: number): Promise<number> => {
  const server = await startServer(root, tempDir("engram-retain-http-"), {
    SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir,
    SERVICE_API_ENABLE_OBSERVATIONS: "false",
    ...setup.env()
  })
  try {
    const perClient = Math.ceil(items / clients / batch)
    // Warm-up: model loading and JIT are not counted.
    await send(server.url, {
      method: "POST",
      path: "/v1/default/banks/warm/memories",
      body: JSON.stringify({ items: Array.from({ length: batch }, (_, n) => toItem(9, n)) })
    })
    const started = performance.now()
    let retained = 0
    await Promise.all(Array.from({ length: clients }, async (_, client) => {
      for (let b = 0; b < perClient; b++) {
        const body = JSON.stringify({ items: Array.from({ length: batch }, (_, n) => toItem(client, b * batch + n)) })
        const answer = await send(server.url, {
          method: "POST",
          path: `/v1/default/banks/retain-${client}/memories`,
          body
        })
        if (answer.status !== 200) throw new Error(`retain answered ${answer.status}: ${answer.body.slice(0, 300)}`)
        retained += batch
      }
    }))
    return retained / ((performance.now() - started) / 1000)
  } finally {
    await server.stop()
  }
}

/** Turn `n` of stream `seed`, said a minute after the one before. */
const toItem = (seed: number, n: number) => ({
  content: turnAt(seed, n).content,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString()
})

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const main = async () => {
  console.log(
    `retain over HTTP: batches of ${batch}, ${items} items per run, observations off, offline models; items/s`
  )
  console.log("| clients | configuration | rounds | median |")
  console.log("|---:|---|---|---:|")
  for (const clients of clientCounts) {
    const rates = new Map<string, Array<number>>(setups.map((setup) => [setup.name, []]))
    for (let round = 0; round < rounds; round++) {
      for (const setup of setups) rates.get(setup.name)!.push(await measure(setup, clients))
    }
    for (const setup of setups) {
      const values = rates.get(setup.name)!
      console.log(
        `| ${clients} | ${setup.name} | ${values.map((v) => v.toFixed(0)).join(", ")} | ${median(values).toFixed(0)} |`
      )
    }
    const ratio = median(rates.get(setups[0]!.name)!) / median(rates.get(setups[1]!.name)!)
    console.log(`| ${clients} | worker / event loop | | ${ratio.toFixed(2)}x (target ≥ 1) |`)
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
