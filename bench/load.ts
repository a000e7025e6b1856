/**
 * The runtime under agents' workload: 50 closed-loop clients over loopback HTTP against `node src/main.ts` (recall
 * only, retain only, mixed 80/20 with observations on, retain with observations on), write→read pairs, retain
 * latency by bank size, idle CPU and resident memory, on banks of 10k and 100k synthetic memories seeded directly
 * (plus 1k); targets are ratios measured in the same run. It also reports the server's CPU per request in the
 * recall-only and mixed cases, and what a mixed-case retain costs in recalls: with the cores busy, throughput follows
 * it. Rerun: `node bench/load.ts [--quick] [--seconds 20] [--sizes 10000,100000] [--pg <url>] [--pg-only]
 * [--server-args "FLAGS"]` (PostgreSQL as well with `--pg` or ENGRAM_BENCH_DATABASE_URL, or only PostgreSQL with
 * `--pg-only`; `--server-args` passes Node flags to every server it starts, e.g. `"--cpu-prof --cpu-prof-dir=DIR"`).
 */
import { execFileSync } from "node:child_process"
import { cpus, loadavg, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { random, recallQuestions, turnAt } from "./support/Conversation.ts"
import {
  type Call,
  closedLoop,
  json,
  type LoadResult,
  percentile,
  type Samples,
  send,
  sequence
} from "./support/LoadClient.ts"
import { type Backend, type Dataset, prepareDatasets } from "./support/Datasets.ts"
import {
  cpuSeconds,
  memoryMiB,
  nodeFlags,
  postgresCpuSeconds,
  removeDir,
  type Server,
  startServer
} from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(`--${name}`)
const option = (name: string) => {
  const index = argv.indexOf(`--${name}`)
  return index >= 0 ? argv[index + 1] : undefined
}
const quick = flag("quick")
const settings = {
  seconds: Number(option("seconds") ?? (quick ? 5 : 20)),
  warmup: Number(option("warmup") ?? (quick ? 1 : 3)),
  clients: Number(option("clients") ?? 50),
  sizes: (option("sizes") ?? (quick ? "2000,10000" : "10000,100000")).split(",").map(Number).filter((n) => n > 0),
  small: Number(option("small") ?? (quick ? 500 : 1000)),
  pairs: Number(option("pairs") ?? (quick ? 20 : 100)),
  /** A block of pairs or sequential retains stops after this long even if it has not done `pairs`. */
  blockSeconds: Number(option("block-seconds") ?? (quick ? 15 : 60)),
  idleSeconds: Number(option("idle-seconds") ?? (quick ? 5 : 10)),
  /** How long to wait for background work (consolidation) to catch up after a case before moving on. */
  settleSeconds: Number(option("settle-seconds") ?? (quick ? 30 : 60)),
  pg: option("pg") ?? process.env["ENGRAM_BENCH_DATABASE_URL"],
  serverArgs: nodeFlags(option("server-args"))
}
const mainSize = settings.sizes[0]!
const largeSize = Math.max(...settings.sizes)
const bankId = "load"
const bank = `/v1/default/banks/${bankId}`
const streamSeed = 1
const questions = recallQuestions(7, 512)
/** The converted GloVe table, shared with the other benches (converting it takes a while; it is kept). */
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

interface Row {
  readonly label: string
  readonly bank: string
  readonly rate?: number
  readonly samples: ReadonlyArray<number>
  readonly errors?: number
}

const k = (n: number) => n >= 1000 ? `${Number((n / 1000).toFixed(1))}k` : String(n)

const recallCall = (rng: () => number): Call => ({
  kind: "recall",
  method: "POST",
  path: `${bank}/memories/recall`,
  body: JSON.stringify({ query: questions[Math.floor(rng() * questions.length)]! })
})

/** One-item retains of the turns that follow the seeded history, in order, shared by all clients of a server. */
const retainCalls = (from: number) => {
  let n = from
  return (): Call => ({
    kind: "retain",
    method: "POST",
    path: `${bank}/memories`,
    body: JSON.stringify({ items: [{ content: turnAt(streamSeed, n++).content }] })
  })
}

const setObservations = (server: Server, enabled: boolean) =>
  json(server.url, { method: "PUT", path: bank, body: JSON.stringify({ enable_observations: enabled }) })

/**
 * Waits until the bank has no queued or running operation and, when observations are on, no fact waiting for
 * consolidation; the seconds it took, or null when it did not happen within `settleSeconds`.
 */
const settle = async (server: Server, observations: boolean) => {
  const start = performance.now()
  while ((performance.now() - start) / 1000 < settings.settleSeconds) {
    const stats = await json(server.url, { method: "GET", path: `${bank}/stats` })
    if (stats.pending_operations === 0 && (!observations || stats.pending_consolidation === 0)) {
      return (performance.now() - start) / 1000
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  log(`background work did not settle within ${settings.settleSeconds} s`)
  return null
}

const warm = async (server: Server) => {
  const rng = random(11)
  for (let i = 0; i < 20; i++) await send(server.url, recallCall(rng))
}

let failedCalls = 0

/** One table row from a closed-loop run: all its calls, or those of the given kinds. */
const rowOf = (label: string, bankLabel: string, result: LoadResult, kinds?: ReadonlyArray<string>): Row => {
  const all = [...result.byKind.entries()].filter(([kind]) => kinds === undefined || kinds.includes(kind))
  const merged: Samples = { latencies: all.flatMap(([, s]) => s.latencies), completed: 0, errors: 0 }
  for (const [, s] of all) {
    merged.completed += s.completed
    merged.errors += s.errors
    if (s.firstError !== undefined) log(`${label}: first error: ${s.firstError}`)
  }
  return {
    label,
    bank: bankLabel,
    rate: merged.completed / result.seconds,
    samples: merged.latencies,
    errors: merged.errors
  }
}

/** Single client: recall after a recall (baseline), then recall right after a one-item retain; the second recall is timed. */
const pairs = async (server: Server, memories: number, retainFrom: number) => {
  const rng = random(23)
  const queries = Array.from({ length: settings.pairs }, () => recallCall(rng))
  const before = recallCall(random(29))
  const timedRecall = async (index: number) => {
    const answer = await send(server.url, queries[index]!)
    if (answer.status !== 200) throw new Error(`recall answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    return answer.ms
  }
  const baseline = await sequence({ count: settings.pairs, seconds: settings.blockSeconds }, async (index) => {
    await send(server.url, before)
    return timedRecall(index)
  })
  const nextRetain = retainCalls(retainFrom)
  const afterWrite = await sequence({ count: settings.pairs, seconds: settings.blockSeconds }, async (index) => {
    const retain = await send(server.url, nextRetain())
    if (retain.status !== 200) throw new Error(`retain answered ${retain.status}: ${retain.body.slice(0, 300)}`)
    return timedRecall(index)
  })
  return {
    rows: [
      { label: "5 recall after a recall (1 client)", bank: k(memories), samples: baseline },
      { label: "5 recall right after a one-item retain", bank: k(memories), samples: afterWrite }
    ],
    baseline,
    afterWrite
  }
}

/** Single client, one-item retains one after another. */
const retainLatency = (server: Server, from: number) => {
  const nextRetain = retainCalls(from)
  return sequence({ count: settings.pairs, seconds: settings.blockSeconds }, async () => {
    const answer = await send(server.url, nextRetain())
    if (answer.status !== 200) throw new Error(`retain answered ${answer.status}: ${answer.body.slice(0, 300)}`)
    return answer.ms
  })
}

/**
 * How long after the last request a server may still be settling: V8's memory reducer runs two or three full
 * collections (0.1-0.25 s each with PGlite's heap on the event loop) in the 20 s after allocation stops, and a
 * compaction or the last consolidation batch may still finish. Reported on its own row, not counted as idle.
 */
const idleGraceSeconds = 20

/** CPU seconds used from now on: the server's, and PostgreSQL's processes' (none on PGlite). */
const cpuSecondsSince = (server: Server, backend: Backend) => {
  const server0 = cpuSeconds(server.pid)
  const pg0 = backend.url === undefined ? 0 : postgresCpuSeconds()
  return () => ({
    server: cpuSeconds(server.pid) - server0,
    postgres: backend.url === undefined ? null : postgresCpuSeconds() - pg0
  })
}

/** CPU used from now on, in % of one core over `seconds`. */
const cpuSince = (server: Server, backend: Backend) => {
  const used = cpuSecondsSince(server, backend)
  return (seconds: number) => {
    const { postgres, server: own } = used()
    return { server: own / seconds * 100, postgres: postgres === null ? null : postgres / seconds * 100 }
  }
}

/**
 * CPU in % of one core, the server's and PostgreSQL's processes: while settling (the `idleGraceSeconds` after the
 * bank's operations settled), then idle over `idleSeconds` with no request.
 */
const idle = async (server: Server, backend: Backend) => {
  const settlingFrom = cpuSince(server, backend)
  await new Promise((resolve) => setTimeout(resolve, idleGraceSeconds * 1000))
  const settling = settlingFrom(idleGraceSeconds)
  const idleFrom = cpuSince(server, backend)
  await new Promise((resolve) => setTimeout(resolve, settings.idleSeconds * 1000))
  return { ...idleFrom(settings.idleSeconds), settling }
}

const withServer = async <A>(dataset: Dataset, label: string, body: (server: Server) => Promise<A>) => {
  log(`server on ${k(dataset.memories)} memories: ${label}`)
  const server = await startServer(root, dataset.dataDir, dataset.env, settings.serverArgs)
  log("server ready")
  try {
    return await body(server)
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    if (failedCalls > 0) console.error(`${failedCalls} failed calls; server log (tail):\n${server.logTail()}`)
    failedCalls = 0
    await server.stop()
    removeDir(dataset.dataDir)
  }
}

const runBackend = async (backend: Backend) => {
  const runs = [mainSize, mainSize, mainSize, ...settings.sizes.slice(1), settings.small]
  const datasets = await prepareDatasets({
    root,
    backend,
    runs,
    bankId,
    streamSeed,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log
  })
  try {
    return await measureBackend(backend, datasets)
  } finally {
    await datasets.dropSchemas()
  }
}

const measureBackend = async (backend: Backend, datasets: Awaited<ReturnType<typeof prepareDatasets>>) => {
  const load = { clients: settings.clients, seconds: settings.seconds, warmup: settings.warmup }
  /** Server CPU (and, on PostgreSQL, the database's) per request of each case's measured window, in ms. */
  const cpuPerRequest = new Map<string, number>()
  const loadOn = async (server: Server, next: () => Call, label?: string) => {
    await closedLoop(server.url, { ...load, seconds: load.warmup, warmup: 0 }, next)
    const used = cpuSecondsSince(server, backend)
    const result = await closedLoop(server.url, { ...load, warmup: 0 }, next)
    const { postgres, server: own } = used()
    const cpu = own + (postgres ?? 0)
    const completed = [...result.byKind.values()].reduce((sum, samples) => sum + samples.completed, 0)
    if (label !== undefined && completed > 0) cpuPerRequest.set(label, (cpu * 1000) / completed)
    for (const samples of result.byKind.values()) failedCalls += samples.errors
    return result
  }
  const rows: Array<Row> = []
  const resources: Array<[string, string]> = []
  const pairResults = new Map<number, { baseline: Array<number>; afterWrite: Array<number> }>()
  let version = "?"
  const idles: Array<number> = []

  // Server 1: recall only, retain only (observations off), write→read pairs at the main size, idle.
  const s1 = await withServer(datasets.take(mainSize), "pairs, recall only, retain only", async (server) => {
    version = (await json(server.url, { method: "GET", path: "/version" })).api_version ?? "?"
    await setObservations(server, false)
    await warm(server)
    log("write→read pairs")
    const pair = await pairs(server, mainSize, mainSize)
    rows.push(...pair.rows)
    pairResults.set(mainSize, pair)
    log("recall only")
    const rng = random(31)
    const recallOnly = await loadOn(server, () => recallCall(rng), "recall only")
    log("retain only")
    const retainOnly = await loadOn(server, retainCalls(mainSize + 10_000))
    await settle(server, false)
    const cpu = await idle(server, backend)
    const memory = memoryMiB(server.pid)
    return { recallOnly, retainOnly, cpu, memory }
  })
  rows.push(rowOf("1 recall only", k(mainSize), s1.recallOnly))
  rows.push(rowOf("2 retain only, observations off", k(mainSize), s1.retainOnly))

  // Server 2: mixed 80 % recall / 20 % one-item retain, observations on.
  const s2 = await withServer(datasets.take(mainSize), "mixed 80/20, observations on", async (server) => {
    await setObservations(server, true)
    await settle(server, true)
    await warm(server)
    log("mixed")
    const rng = random(37)
    const nextRetain = retainCalls(mainSize + 10_000)
    const mixed = await loadOn(server, () => rng() < 0.2 ? nextRetain() : recallCall(rng), "mixed")
    const caughtUp = await settle(server, true)
    return { mixed, caughtUp }
  })
  rows.push(rowOf("3 mixed 80/20, observations on", k(mainSize), s2.mixed))
  rows.push(rowOf("3   its recalls", k(mainSize), s2.mixed, ["recall"]))
  rows.push(rowOf("3   its retains", k(mainSize), s2.mixed, ["retain"]))

  // Server 3: retain only, observations on.
  const s3 = await withServer(datasets.take(mainSize), "retain only, observations on", async (server) => {
    await setObservations(server, true)
    await settle(server, true)
    await warm(server)
    log("retain only")
    const retainOn = await loadOn(server, retainCalls(mainSize + 10_000))
    const caughtUp = await settle(server, true)
    return { retainOn, caughtUp }
  })
  rows.push(rowOf("4 retain only, observations on", k(mainSize), s3.retainOn))

  // Larger banks: write→read pairs; at the largest also retain latency, resident memory and idle CPU.
  let large:
    | { retains: Array<number>; memory: { rss: number; peak: number }; cpu: Awaited<ReturnType<typeof idle>> }
    | undefined
  for (const size of settings.sizes.slice(1)) {
    const result = await withServer(datasets.take(size), "pairs, retain latency, memory, idle", async (server) => {
      await setObservations(server, false)
      await warm(server)
      log("write→read pairs")
      const pair = await pairs(server, size, size)
      pairResults.set(size, pair)
      rows.push(...pair.rows)
      if (size !== largeSize) return undefined
      log("retain latency")
      const retains = await retainLatency(server, size + 10_000)
      const memory = memoryMiB(server.pid)
      await settle(server, false)
      const cpu = await idle(server, backend)
      return { retains, memory, cpu }
    })
    if (result !== undefined) large = result
  }

  // Smallest bank: retain latency baseline.
  const smallRetains = await withServer(datasets.take(settings.small), "retain latency", async (server) => {
    await setObservations(server, false)
    await warm(server)
    return retainLatency(server, settings.small + 10_000)
  })
  rows.push({ label: "6 one-item retain (1 client)", bank: k(settings.small), samples: smallRetains })
  if (large !== undefined) {
    rows.push({ label: "6 one-item retain (1 client)", bank: k(largeSize), samples: large.retains })
  }

  const cpuText = (cpu: { server: number; postgres: number | null }) =>
    `${cpu.server.toFixed(2)} % of a core` +
    (cpu.postgres === null ? "" : ` (+ postgres processes ${cpu.postgres.toFixed(2)} %)`)
  const mib = (m: { rss: number; peak: number }) => `${m.rss.toFixed(0)} MiB (peak ${m.peak.toFixed(0)} MiB)`
  const idleWhen = `over ${settings.idleSeconds} s, ${idleGraceSeconds} s after the last request`
  const settlingWhen = `over the ${idleGraceSeconds} s after the last request`
  resources.push([`CPU settling ${settlingWhen}, ${k(mainSize)} server after its load`, cpuText(s1.cpu.settling)])
  resources.push([`idle CPU ${idleWhen}, ${k(mainSize)} server after its load`, cpuText(s1.cpu)])
  idles.push(s1.cpu.server + (s1.cpu.postgres ?? 0))
  if (large !== undefined) {
    resources.push([`CPU settling ${settlingWhen}, ${k(largeSize)} bank loaded`, cpuText(large.cpu.settling)])
    resources.push([`idle CPU ${idleWhen}, ${k(largeSize)} bank loaded`, cpuText(large.cpu)])
    idles.push(large.cpu.server + (large.cpu.postgres ?? 0))
  }
  resources.push([`resident memory, ${k(mainSize)} server after its load`, mib(s1.memory)])
  if (large !== undefined) {
    resources.push([`resident memory, ${k(largeSize)} bank loaded and recalled`, mib(large.memory)])
  }
  const caught = (seconds: number | null) =>
    seconds === null ? `not within ${settings.settleSeconds} s` : `${seconds.toFixed(1)} s`
  // Fifty clients keep the cores busy (the load client shares them on one machine), so throughput follows CPU per
  // request: mixed reaches 0.9 × recall-only only when its retains cost at most (1 / 0.9 − 0.8) / 0.2 = 1.56 recalls.
  const recallCpu = cpuPerRequest.get("recall only")
  const mixedCpu = cpuPerRequest.get("mixed")
  if (recallCpu !== undefined && mixedCpu !== undefined) {
    const retainCpu = (mixedCpu - 0.8 * recallCpu) / 0.2
    resources.push([
      "CPU per request, recall only / mixed 80/20 (server" + (backend.url === undefined ? ")" : " + postgres)"),
      `${recallCpu.toFixed(1)} / ${mixedCpu.toFixed(1)} ms; so a mixed-case retain ≈ ${retainCpu.toFixed(1)} ms = ${
        (retainCpu / recallCpu).toFixed(2)
      } recalls`
    ])
  }
  resources.push(["consolidation caught up after case 3", caught(s2.caughtUp)])
  resources.push(["consolidation caught up after case 4", caught(s3.caughtUp)])

  // Targets, as ratios within this run.
  const targets: Array<[string, number, string, boolean]> = []
  const rate = (label: string) => rows.find((r) => r.label === label)!.rate!
  const p = (label: string, q: number) => percentile(rows.find((r) => r.label === label)!.samples, q)
  const recallRate = rate("1 recall only")
  // Judged on the value as printed (two decimals), so a row never reads "0.70 ≥ 0.7 FAIL".
  const shown = (value: number) => Math.round(value * 100) / 100
  const ratio = (name: string, value: number, limit: number, atMost: boolean) =>
    targets.push([
      name,
      value,
      `${atMost ? "≤" : "≥"} ${limit}`,
      atMost ? shown(value) <= limit : shown(value) >= limit
    ])
  ratio(
    "mixed 80/20 throughput / recall-only throughput",
    rate("3 mixed 80/20, observations on") / recallRate,
    0.8,
    false
  )
  ratio("mixed recall p99 / recall-only p99", p("3   its recalls", 0.99) / p("1 recall only", 0.99), 1.5, true)
  for (const [size, pair] of pairResults) {
    ratio(
      `recall after retain / after recall, p50, ${k(size)}`,
      percentile(pair.afterWrite, 0.5) / percentile(pair.baseline, 0.5),
      1.5,
      true
    )
    ratio(
      `recall after retain / after recall, p95, ${k(size)}`,
      percentile(pair.afterWrite, 0.95) / percentile(pair.baseline, 0.95),
      1.5,
      true
    )
  }
  ratio(
    "retain throughput, observations on / off",
    rate("4 retain only, observations on") / rate("2 retain only, observations off"),
    0.7,
    false
  )
  if (large !== undefined) {
    ratio(
      `one-item retain p50, ${k(largeSize)} / ${k(settings.small)} bank`,
      percentile(large.retains, 0.5) / percentile(smallRetains, 0.5),
      3,
      true
    )
  }
  const idleMax = Math.max(...idles)
  targets.push([`idle CPU, % of a core (worst of ${idles.length})`, idleMax, "< 2", shown(idleMax) < 2])
  if (large !== undefined) {
    targets.push([
      `resident memory with the ${k(largeSize)} bank, MiB`,
      large.memory.rss,
      "≤ 1024",
      large.memory.rss <= 1024
    ])
  }
  // Rows in case order (they were measured in server order).
  rows.sort((a, b) => Number(a.label.split(" ")[0]) - Number(b.label.split(" ")[0]))
  return { rows, resources, targets, version, datasets }
}

const git = (args: ReadonlyArray<string>) => {
  try {
    return execFileSync("git", ["--no-optional-locks", ...args], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    }).trim()
  } catch {
    return null
  }
}

const fmt = (n: number, digits = 1) => Number.isFinite(n) ? n.toFixed(digits) : "–"

const report = (backend: Backend, result: Awaited<ReturnType<typeof runBackend>>) => {
  const { rows, resources, targets, version, datasets } = result
  const banks = datasets.sizes.map((s) =>
    `${s.memories.toLocaleString("en")} memories (${s.links.toLocaleString("en")} links)`
  )
  console.log("")
  console.log(
    `## ${backend.name}: engram ${version}, ${settings.clients} closed-loop clients, ${settings.seconds} s per case after ` +
      `${settings.warmup} s warm-up, offline defaults (GloVe, no LLM)`
  )
  console.log(`banks: ${banks.join(", ")}; seeded in ${fmt(datasets.seedSeconds, 0)} s`)
  console.log("")
  console.log("| case | bank | req/s | p50 ms | p95 ms | p99 ms | n | errors |")
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) {
    console.log(
      `| ${row.label} | ${row.bank} | ${row.rate === undefined ? "" : fmt(row.rate)} | ${
        fmt(percentile(row.samples, 0.5))
      } | ` +
        `${fmt(percentile(row.samples, 0.95))} | ${fmt(percentile(row.samples, 0.99))} | ${row.samples.length} | ${
          row.errors ?? 0
        } |`
    )
  }
  console.log("")
  console.log("| resource | measured |")
  console.log("|---|---|")
  for (const [name, value] of resources) console.log(`| ${name} | ${value} |`)
  console.log("")
  console.log("| target | measured | limit | result |")
  console.log("|---|---:|---:|---|")
  for (const [name, value, limit, pass] of targets) {
    console.log(`| ${name} | ${fmt(value, 2)} | ${limit} | ${pass ? "PASS" : "FAIL"} |`)
  }
}

const loads: Array<number> = [loadavg()[0]!]
setInterval(() => loads.push(loadavg()[0]!), 5000).unref()

const main = async () => {
  const commit = git(["rev-parse", "--short", "HEAD"]) ?? "unknown (not a git checkout)"
  const changed = git(["status", "--porcelain"])
  const dirty = changed === null
    ? ""
    : changed === ""
    ? ", clean tree"
    : `, plus ${changed.split("\n").length} uncommitted paths`
  console.log(
    `# engram load bench: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, commit ${commit}${dirty}, ` +
      `Node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at start`
  )
  const backends: Array<Backend> = flag("pg-only") ? [] : [{ name: "PGlite (embedded)" }]
  if (settings.pg !== undefined) backends.push({ name: "PostgreSQL", url: settings.pg })
  for (const backend of backends) report(backend, await runBackend(backend))
  console.log("")
  const busy = loads.filter((l) => l > cpus().length + 0.5).length / loads.length
  console.log(
    `run time ${((performance.now() - started) / 60_000).toFixed(1)} min; 1-min load average during the run ` +
      `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` +
      (busy > 0.1
        ? ` (above the ${cpus().length} cores ${(busy * 100).toFixed(0)} % of the time: other processes shared them)`
        : "")
  )
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
