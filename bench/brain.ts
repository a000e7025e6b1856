/**
 * The `.brain` file on a seeded bank (100k memories by default: offline-extractor facts, GloVe vectors, retain's
 * link policy), against the server as a child process over loopback HTTP, all in one run on one data directory:
 *   1. cold start → first recall (builds the brain from SQL) → export (time, file size);
 *   2. restart → import the file (time; installed as it is) → first recall;
 *   3. restart → first recall again (a second cold-start sample, so a warm OS page cache favours neither path);
 *   4. restart with kept brain files on (the default) → first recall (loads the file the import stored).
 * Steps 1–3 run with SERVICE_API_BRAIN_KEEP_FILES=false, so a cold start builds from SQL.
 * Each server first warms up on a small other bank, so model loading and JIT are not counted in either path.
 * Target: the first recall after import at least 5× faster than the first recall after a cold start (the better of
 * the two cold samples). Rerun: `node bench/brain.ts [memories]`.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { recallQuestions } from "./support/Conversation.ts"
import { prepareDatasets } from "./support/Datasets.ts"
import { json, send } from "./support/LoadClient.ts"
import { removeDir, startServer } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const memories = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? 100_000)
const bankId = "brain"
const bank = `/v1/default/banks/${bankId}`
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)
// A 100k bank's file is tens of MB: above the default request limit.
const env = { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir, SERVICE_API_MAX_REQUEST_BYTES: String(1024 * 1024 * 1024) }
const questions = recallQuestions(11, 6)

const firstRecall = async (url: string, n: number) => {
  const answer = await send(url, {
    method: "POST",
    path: `${bank}/memories/recall`,
    body: JSON.stringify({ query: questions[n % questions.length]!, budget: "mid" })
  })
  if (answer.status !== 200) throw new Error(`recall answered ${answer.status}: ${answer.body.slice(0, 300)}`)
  return answer.ms
}

const timedFetch = async (url: string, init?: RequestInit) => {
  const t0 = performance.now()
  const response = await fetch(url, init)
  const bytes = new Uint8Array(await response.arrayBuffer())
  return { status: response.status, bytes, ms: performance.now() - t0 }
}

/**
 * A small other bank retained and recalled first, so what every first request pays (models, word vectors, JIT) is
 * paid before the measured one: the measured first recall on the big bank then differs only in its brain.
 */
const warmUp = async (url: string) => {
  await json(url, {
    method: "POST",
    path: "/v1/default/banks/warmup/memories",
    body: JSON.stringify({ items: [{ content: "Warm-up note: the kettle is in the kitchen." }] })
  })
  for (let n = 0; n < 3; n++) {
    await json(url, {
      method: "POST",
      path: "/v1/default/banks/warmup/memories/recall",
      body: JSON.stringify({ query: questions[n]!, budget: "mid" })
    })
  }
}

const withServer = async <A>(
  label: string,
  dataDir: string,
  run: (url: string) => Promise<A>,
  keepFiles = false
): Promise<A> => {
  log(`${label}: starting the server`)
  const server = await startServer(root, dataDir, { ...env, SERVICE_API_BRAIN_KEEP_FILES: String(keepFiles) })
  try {
    await warmUp(server.url)
    return await run(server.url)
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server.stop()
  }
}

const main = async () => {
  const datasets = await prepareDatasets({
    root,
    backend: { name: "PGlite" },
    runs: [memories],
    bankId,
    streamSeed: 3,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log
  })
  const { dataDir } = datasets.take(memories)
  try {
    const first = await withServer("cold start 1", dataDir, async (url) => {
      const coldMs = await firstRecall(url, 3)
      const exported = await timedFetch(`${url}${bank}/brain/export`)
      if (exported.status !== 200) throw new Error(`export answered ${exported.status}`)
      const again = await timedFetch(`${url}${bank}/brain/export`)
      const status = await json(url, { method: "GET", path: `${bank}/brain/status` })
      return { coldMs, exportMs: exported.ms, reexportMs: again.ms, file: exported.bytes, status }
    })
    log(`exported ${(first.file.length / 1048576).toFixed(1)} MiB`)
    const imported = await withServer("restart + import", dataDir, async (url) => {
      const upload = await timedFetch(`${url}${bank}/brain/import`, {
        method: "POST",
        headers: { "content-type": "application/octet-stream" },
        body: first.file
      })
      const outcome = JSON.parse(new TextDecoder().decode(upload.bytes))
      if (upload.status !== 200 || outcome.installed !== true) {
        throw new Error(`import answered ${upload.status}: ${JSON.stringify(outcome)}`)
      }
      const recallMs = await firstRecall(url, 4)
      const status = await json(url, { method: "GET", path: `${bank}/brain/status` })
      if (status.metrics.builds !== 0) {
        throw new Error(`the brain was rebuilt after the import: ${JSON.stringify(status.metrics)}`)
      }
      return { importMs: upload.ms, recallMs }
    })
    const second = await withServer("cold start 2", dataDir, async (url) => ({ coldMs: await firstRecall(url, 5) }))
    const kept = await withServer("restart with kept files", dataDir, async (url) => {
      const recallMs = await firstRecall(url, 6)
      const status = await json(url, { method: "GET", path: `${bank}/brain/status` })
      if (status.metrics.file_loads !== 1 || status.metrics.builds !== 0) {
        throw new Error(`the kept file was not loaded: ${JSON.stringify(status.metrics)}`)
      }
      return { recallMs }
    }, true)
    const cold = Math.min(first.coldMs, second.coldMs)
    const buildMs = first.status.metrics.last_build_ms as number
    console.log(
      `brain: ${memories} memories (${datasets.sizes[0]!.links} links), PGlite, offline GloVe, one client; ms`
    )
    console.log("| step | ms |")
    console.log("|---|---:|")
    console.log(
      `| export (builds the file; ${(first.file.length / 1048576).toFixed(1)} MiB) | ${first.exportMs.toFixed(0)} |`
    )
    console.log(`| export again (unchanged bank: the same file) | ${first.reexportMs.toFixed(0)} |`)
    console.log(`| import (upload, checks, install) | ${imported.importMs.toFixed(0)} |`)
    console.log(`| first recall after import | ${imported.recallMs.toFixed(0)} |`)
    console.log(
      `| first recall after cold start (best of ${first.coldMs.toFixed(0)}, ${second.coldMs.toFixed(0)}; brain build ${
        buildMs?.toFixed(0)
      } of it) | ${cold.toFixed(0)} |`
    )
    console.log(`| first recall after a restart, kept file loaded | ${kept.recallMs.toFixed(0)} |`)
    console.log(`| cold / after import | ${(cold / imported.recallMs).toFixed(1)}× (target ≥ 5×) |`)
    console.log(`| cold / kept file loaded | ${(cold / kept.recallMs).toFixed(1)}× |`)
    console.log(`| cold / (import + first recall) | ${(cold / (imported.importMs + imported.recallMs)).toFixed(1)}× |`)
  } finally {
    removeDir(dataDir)
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
