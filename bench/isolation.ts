/**
 * Isolation (issue 32): one bank's work must never stall another bank. Bank B (100 memories, filled over HTTP) is
 * recalled by one client in sequence (budget low, a fixed set of questions) while a second loop polls /health every
 * ~50 ms, each from a process of its own (`support/ProbeChild.ts`), first in a quiet phase — the baseline of the same run — then while other banks do one heavy job at a time:
 * 100-item retains, a cold brain build, a `.brain` import, a codebase import, a dataset import, a consolidation, a
 * dream, a memory repo's first commit and a branch, 50 clients of mixed traffic, 4 clients sending hostile bodies
 * at full speed from a child process (issue 33: no key, a declared length over the cap, 5M elements, 100k levels deep;
 * the server runs with an API key, which every other request of the bench carries), and last a retention sweep that
 * evicts all but 1,000 of the large bank's memories (issue 38). Each window also reports the
 * server's CPU seconds and bytes read, which a loaded machine hardly changes. Targets per phase: B's recall
 * p99 ≤ 2 × the quiet p99, /health p99 ≤ 50 ms, no failed request, no connection reset. Banks A are seeded directly
 * (10k memories, 100k for the cold build and the import; `--quick`: 2k and 10k). It measures and never retries.
 * Rerun: `node bench/isolation.ts [--quick] [--pg <url> [--pg-only]] [--phases 10,...] [--server-args "FLAGS"]` (a
 * PostgreSQL pass too with `--pg` or ENGRAM_BENCH_DATABASE_URL, in a temporary schema, or alone with `--pg-only`; `--phases` runs only the numbered phases,
 * between the two quiet ones; `--data-dir DIR` (PGlite) seeds DIR once and reuses it; `--server-args` passes Node flags to the server, e.g. `--cpu-prof`).
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { createInterface } from "node:readline"
import { makeZip } from "../test/support/ZipWriter.ts"
import { random, recallQuestions, turnAt } from "./support/Conversation.ts"
import type { Backend } from "./support/Datasets.ts"
import { seedOverHttp } from "./support/HttpBank.ts"
import { benchHeaders, type Call, percentile } from "./support/LoadClient.ts"
import { call, emptyProbe, multipart, type Probe } from "./support/Probe.ts"
import { startProbe } from "./support/ProbeChild.ts"
import type { DropJob, SeedJob } from "./support/seed.ts"
import {
  cpuSeconds,
  nodeFlags,
  removeDir,
  runScript,
  type Server,
  startServer,
  tempDir,
  tempSchema
} from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const option = (name: string) => {
  const index = argv.indexOf(`--${name}`)
  return index >= 0 ? argv[index + 1] : undefined
}
const quick = argv.includes("--quick")
const settings = {
  memories: quick ? 2_000 : 10_000,
  large: quick ? 10_000 : 100_000,
  bMemories: 100,
  quietSeconds: quick ? 5 : 10,
  retainSeconds: quick ? 5 : 10,
  loadSeconds: quick ? 5 : 15,
  clients: 50,
  datasetRows: quick ? 2_000 : 10_000,
  consolidationItems: 300,
  hostileClients: 4,
  hostileSeconds: quick ? 5 : 10,
  /** What phase 12's retention sweep keeps of the large bank. */
  keptAfterSweep: 1_000,
  phases: option("phases")?.split(",").map((n) => n.trim()),
  /** B is measured at least this long, so a job of a few hundred ms still yields a sample, and its after-effects. */
  minWindowSeconds: 2,
  jobTimeoutMinutes: quick ? 10 : 45,
  settleSeconds: quick ? 120 : 600,
  pg: option("pg") ?? process.env["ENGRAM_BENCH_DATABASE_URL"],
  /** With `--pg`: the PostgreSQL pass alone (a 100k seed takes minutes on each backend). */
  pgOnly: argv.includes("--pg-only"),
  /** Node flags for the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see what it spends in a phase. */
  dataDir: option("data-dir"),
  serverArgs: nodeFlags(option("server-args"))
}
const target = { ratio: 2, healthP99: 50 }
const apiKey = "isolation-bench-key"
benchHeaders["authorization"] = `Bearer ${apiKey}`
const banks = { b: "iso-b", a: "iso-a", large: "iso-a-large", obs: "iso-a-obs" } as const
const streams = { a: 1, large: 2, obs: 3 } as const
const bankPath = (bankId: string) => `/v1/default/banks/${bankId}`
const questions = recallQuestions(17, 64)
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error)
const k = (n: number) => n >= 1000 ? `${Number((n / 1000).toFixed(1))}k` : String(n)
const fmt = (n: number, digits = 1) => Number.isFinite(n) ? n.toFixed(digits) : "–"

// B's recall and `/health` are probed from processes of their own (`ProbeChild.ts`), with their own sockets.
const jobAgent = new Agent({ keepAlive: true, maxSockets: 4 })

/** A's side: a 2xx answer, or an error naming the request and the answer. */
const ok = async (url: string, method: string, path: string, body?: string | Uint8Array, type?: string) => {
  const reply = await call(jobAgent, url, method, path, body, type)
  if (reply.status < 200 || reply.status >= 300) {
    throw new Error(
      `${method} ${path} answered ${reply.status === 0 ? "a network error" : reply.status}: ${
        reply.body.toString("utf8").slice(0, 400)
      }`
    )
  }
  return reply
}
const okJson = async (url: string, method: string, path: string, body?: unknown): Promise<any> =>
  JSON.parse((await ok(url, method, path, body === undefined ? undefined : JSON.stringify(body))).body.toString("utf8"))

const waitOperation = async (url: string, bankId: string, id: string) => {
  for (;;) {
    const detail = await okJson(url, "GET", `${bankPath(bankId)}/operations/${id}`)
    if (detail.status === "completed") return detail
    if (detail.status !== "pending" && detail.status !== "running") {
      throw new Error(
        `operation ${id} (${detail.task_type ?? "?"}) ended ${detail.status}: ${detail.error_message ?? ""}`
      )
    }
    await sleep(200)
  }
}

/** B's recalls, one per question, sent in turn by B's probe. */
const bRecalls = () =>
  questions.map((query) => ({
    method: "POST",
    path: `${bankPath(banks.b)}/memories/recall`,
    body: JSON.stringify({ query, budget: "low" })
  }))

/** A's job, prepared outside the measured window; it answers what it did, for the table. */
type Job = () => Promise<string>
interface Phase {
  readonly name: string
  readonly prepare: (url: string) => Promise<Job>
}

interface Row {
  readonly name: string
  readonly jobSeconds: number
  readonly detail?: string
  readonly error?: string
  readonly recall: Probe
  readonly health: Probe
  /** The longest a probe process's own event loop was held up: a delay there shows in every latency it measures. */
  readonly clientDelayMs: number
  /**
   * The server's CPU time in the window (user + system, all its threads), in seconds: unlike latencies it hardly
   * depends on what else the machine runs, so it compares a phase's cost between runs on a loaded machine.
   */
  readonly serverCpuSeconds: number
  /** Bytes the server read in the window (`rchar`: sockets, pipes and files), in MB: what a refused body still cost. */
  readonly serverReadMb: number
}

const timeLimit = <A>(promise: Promise<A>, ms: number) => {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${ms / 60_000} min; the next phases may overlap it`)),
      ms
    )
  })
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
}

/** Bytes a process has read through read(2) and its kin, sockets included (`rchar` of /proc/<pid>/io). */
const bytesRead = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/io`, "utf8").match(/^rchar:\s+(\d+)/m)?.[1] ?? Number.NaN)

const measure = async (url: string, serverPid: number, phase: Phase): Promise<Row> => {
  let job: Job
  try {
    job = await phase.prepare(url)
  } catch (error) {
    const error_ = `preparing: ${messageOf(error)}`
    return {
      name: phase.name,
      jobSeconds: Number.NaN,
      error: error_,
      recall: emptyProbe(),
      health: emptyProbe(),
      clientDelayMs: Number.NaN,
      serverCpuSeconds: Number.NaN,
      serverReadMb: Number.NaN
    }
  }
  // Each probe runs in a process of its own (`ProbeChild.ts`), so what this process does (A's job, reading answers)
  // never shows as the server's latency. B's probe sends one recall first: B's brain is loaded and current before the
  // window, which measures isolation, not B's own cold start. The health probe's first request warms its kept-alive
  // socket: after a long preparation an idle one raced the server's close of it (an ECONNRESET counted against the
  // server).
  const authorization = benchHeaders["authorization"]!
  const [recallProbe, healthProbe] = await Promise.all([
    startProbe({ url, authorization, calls: bRecalls(), paceMs: 0 }),
    startProbe({ url, authorization, calls: [{ method: "GET", path: "/health" }], paceMs: 50 })
  ])
  // The window's bounds on the monotonic clock, which a server's `--cpu-prof` samples share (µs): see ProfileWindow.ts.
  log(`${phase.name}: measuring from ${process.hrtime.bigint() / 1000n} µs`)
  const cpu0 = cpuSeconds(serverPid)
  const read0 = bytesRead(serverPid)
  const t0 = performance.now()
  const outcome: { detail?: string; error?: string } = await timeLimit(job(), settings.jobTimeoutMinutes * 60_000).then(
    (detail) => ({ detail }),
    (error) => ({ error: messageOf(error) })
  )
  const jobSeconds = (performance.now() - t0) / 1000
  const rest = settings.minWindowSeconds * 1000 - (performance.now() - t0)
  if (rest > 0) await sleep(rest)
  const [recalled, polled] = await Promise.all([recallProbe.stop(), healthProbe.stop()])
  const serverCpu = cpuSeconds(serverPid) - cpu0
  const serverReadMb = (bytesRead(serverPid) - read0) / 1e6
  const row = { name: phase.name, jobSeconds, ...outcome, recall: recalled.probe, health: polled.probe }
  const clientDelayMs = Math.max(recalled.loopMaxMs, polled.loopMaxMs)
  log(
    `${phase.name}: ${outcome.error === undefined ? "done" : `failed: ${outcome.error}`} in ${
      jobSeconds.toFixed(1)
    } s, ` +
      `window ended at ${process.hrtime.bigint() / 1000n} µs`
  )
  return { ...row, clientDelayMs, serverCpuSeconds: serverCpu, serverReadMb }
}

/** Until A's banks have no queued or running operation, so one phase's leftovers do not land in the next. */
const settle = async (url: string) => {
  const deadline = performance.now() + settings.settleSeconds * 1000
  for (const bankId of [banks.a, banks.large, banks.obs]) {
    while (performance.now() < deadline) {
      const stats = await okJson(url, "GET", `${bankPath(bankId)}/stats`).catch(() => undefined)
      if (stats === undefined || stats.pending_operations === 0) break
      await sleep(500)
    }
  }
  if (performance.now() >= deadline) log(`A's banks did not settle within ${settings.settleSeconds} s`)
}

const retainBody = (stream: number, from: number, count: number) =>
  JSON.stringify({ items: Array.from({ length: count }, (_, i) => ({ content: turnAt(stream, from + i).content })) })

const walk = (directory: string): Array<string> =>
  readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    return name.startsWith(".") ? [] : statSync(path).isDirectory() ? walk(path) : [path]
  })

const chatRow = (n: number) =>
  JSON.stringify({
    messages: [
      { role: "system", content: "You are a concise assistant for a hardware store." },
      {
        role: "user",
        content: `Customer ${n} asks: do you stock ${n % 7 === 0 ? "brass" : "steel"} hinges in size ${n % 40}?`
      },
      {
        role: "assistant",
        content: `Yes, we stock size ${n % 40} hinges; aisle ${n % 12}, shelf ${
          n % 5
        }. Ask at the counter for bulk orders.`
      }
    ]
  })

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/**
 * Issue 33: bodies an attacker sends, refused before they are parsed; none may slow B. The four clients run in a child
 * process (`support/HostileSender.ts`): from this process, writing 25 MB bodies held up the loop that times B.
 */
const hostileBodies: Phase = {
  name:
    `11 hostile bodies, ${settings.hostileClients} clients at full speed: no key, declared 2 GiB, 5M elements, 100k deep`,
  prepare: async (url) => {
    const job = {
      url,
      path: `${bankPath(banks.a)}/memories`,
      authorization: benchHeaders["authorization"]!,
      clients: settings.hostileClients,
      seconds: settings.hostileSeconds
    }
    const child = spawn(process.execPath, [join(root, "bench/support/HostileSender.ts"), JSON.stringify(job)], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    const stopChild = () => child.kill("SIGKILL")
    process.on("exit", stopChild)
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    const nextLine = async () => {
      const line = await lines.next()
      if (line.done === true) throw new Error(`the hostile sender exited with ${await exited}`)
      return line.value
    }
    if (await nextLine() !== "ready") throw new Error("the hostile sender did not start")
    return async () => {
      child.stdin!.write("go\n")
      const answers = new Map(Object.entries(JSON.parse(await nextLine()) as Record<string, number>))
      await exited
      process.off("exit", stopChild)
      const unexpected = [...answers.keys()].filter((answer) => !/ 4\d\d$/.test(answer))
      if (unexpected.length > 0) throw new Error(`hostile bodies not refused with a 4xx: ${unexpected.join(", ")}`)
      const total = [...answers.values()].reduce((sum, count) => sum + count, 0)
      return `${total} refused (${[...answers].map(([answer, count]) => `${answer} ×${count}`).join(", ")})`
    }
  }
}

const phases: ReadonlyArray<Phase> = [
  {
    name: `1 retains of 100 items, back to back, ${banks.a} (${k(settings.memories)})`,
    prepare: async (url) => async () => {
      const times: Array<number> = []
      const end = performance.now() + settings.retainSeconds * 1000
      for (let from = settings.memories; performance.now() < end; from += 100) {
        const body = retainBody(streams.a, from, 100)
        times.push((await ok(url, "POST", `${bankPath(banks.a)}/memories`, body)).ms)
      }
      return `${times.length} retains, ${fmt(percentile(times, 0.5), 0)} ms each (p50)`
    }
  },
  {
    name: `2 cold brain build, ${banks.large} (${k(settings.large)})`,
    prepare: async (url) => {
      const brain = `${bankPath(banks.large)}/brain/status`
      const before = (await okJson(url, "GET", brain)).metrics
      const recall = async () => {
        const reply = await ok(
          url,
          "POST",
          `${bankPath(banks.large)}/memories/recall`,
          JSON.stringify({ query: questions[0]!, budget: "low", trace: true })
        )
        return {
          ms: reply.ms,
          brainMs: JSON.parse(reply.body.toString("utf8")).trace?.stages_ms?.brain as number | undefined
        }
      }
      const summary = async (how: string) => {
        const after = (await okJson(url, "GET", brain)).metrics
        return `${how}; builds ${before.builds} → ${after.builds}, file loads ${before.file_loads} → ${after.file_loads}`
      }
      if (before.brain_loaded !== true) {
        // Never read since the server started, and no kept `.brain` file yet: the first recall builds it.
        return async () => {
          const first = await recall()
          return summary(`first recall ${seconds(first.ms)}, its brain stage ${seconds(first.brainMs ?? Number.NaN)}`)
        }
      }
      // A sub-routine with force_rebuild drops the brain and builds it again inside the operation.
      return async () => {
        const t0 = performance.now()
        const queued = await okJson(url, "POST", `${bankPath(banks.large)}/sub-routine`, {
          mode: "warmup",
          force_rebuild: true
        })
        await waitOperation(url, banks.large, queued.operation_id)
        const built = performance.now() - t0
        const next = await recall()
        return summary(
          `brain was loaded: sub-routine force_rebuild ${seconds(built)}, then a recall ${seconds(next.ms)}`
        )
      }
    }
  },
  {
    name: `3 .brain import, ${banks.large} (${k(settings.large)})`,
    prepare: async (url) => {
      const exported = await ok(url, "GET", `${bankPath(banks.large)}/brain/export`)
      const file = exported.body
      log(`exported A's brain: ${(file.length / 1_048_576).toFixed(1)} MiB in ${seconds(exported.ms)}`)
      return async () => {
        const reply = await ok(url, "POST", `${bankPath(banks.large)}/brain/import`, file, "application/octet-stream")
        const answer = JSON.parse(reply.body.toString("utf8"))
        const how = answer.installed === true ? "installed" : `not installed (${answer.install_reason})`
        return `${(file.length / 1_048_576).toFixed(1)} MiB, ${how}`
      }
    }
  },
  {
    name: `4 codebase import of this repository's src/, ${banks.a}`,
    prepare: async (url) => {
      const files = walk(join(root, "src"))
      const archive = makeZip(files.map((path) => ({ name: relative(root, path), data: readFileSync(path) })))
      const upload = multipart([
        { name: "archive", filename: "src.zip", type: "application/zip", data: archive },
        { name: "request", value: JSON.stringify({ name: `engram-src-${Date.now()}` }) }
      ])
      return async () => {
        const reply = await ok(url, "POST", `${bankPath(banks.a)}/codebases/import/zip`, upload.body, upload.type)
        const queued = JSON.parse(reply.body.toString("utf8"))
        await waitOperation(url, banks.a, queued.operation_id)
        return `${files.length} files, ${(archive.length / 1024).toFixed(0)} KiB zip, request ${fmt(reply.ms, 0)} ms`
      }
    }
  },
  {
    name: `5 dataset import of ${k(settings.datasetRows)} rows, ${banks.a}`,
    prepare: async (url) => {
      const dataset = await okJson(url, "POST", `${bankPath(banks.a)}/forge/taste/datasets`, {
        name: "isolation",
        schema_type: "chat_messages"
      })
      const jsonl = Array.from({ length: settings.datasetRows }, (_, n) => chatRow(n)).join("\n") + "\n"
      return async () => {
        const answer = await okJson(url, "POST", `${bankPath(banks.a)}/forge/taste/datasets/${dataset.id}/sets`, {
          jsonl
        })
        return `${answer.imported_count} rows imported, ${(jsonl.length / 1e6).toFixed(1)} MB of JSONL`
      }
    }
  },
  {
    name: `6 consolidation, ${banks.obs} (${k(settings.memories)}, observations on)`,
    prepare: async (url) => {
      await okJson(url, "PUT", bankPath(banks.obs), { enable_observations: true })
      const bodies = Array.from(
        { length: settings.consolidationItems / 100 },
        (_, i) => retainBody(streams.obs, settings.memories + i * 100, 100)
      )
      return async () => {
        const t0 = performance.now()
        for (const body of bodies) await ok(url, "POST", `${bankPath(banks.obs)}/memories`, body)
        const retained = performance.now()
        let stats = await okJson(url, "GET", `${bankPath(banks.obs)}/stats`)
        const waiting = stats.pending_consolidation
        while (stats.pending_consolidation > 0 || stats.pending_operations > 0) {
          await sleep(250)
          stats = await okJson(url, "GET", `${bankPath(banks.obs)}/stats`)
        }
        return `${settings.consolidationItems} items retained in ${
          seconds(retained - t0)
        } (${waiting} facts still waiting then), ` +
          `consolidated ${seconds(performance.now() - retained)} later (${stats.total_observations} observations)`
      }
    }
  },
  {
    name: `7 dream run, ${banks.a}`,
    prepare: async (url) => {
      await okJson(url, "PATCH", `${bankPath(banks.a)}/config`, { dream: { enabled: true } })
      return async () => {
        const queued = await okJson(url, "POST", `${bankPath(banks.a)}/dreams/trigger`, {
          trigger_source: "manual",
          run_type: "dream"
        })
        const done = await waitOperation(url, banks.a, queued.operation_id)
        const runs = await okJson(url, "GET", `${bankPath(banks.a)}/dreams?limit=1`)
        const run = runs.items?.[0]
        return `run ${run?.status ?? JSON.stringify(done.result).slice(0, 80)}`
      }
    }
  },
  {
    name: `8 memory repo: enable (first commit) + branch, ${banks.a}`,
    prepare: async (url) => async () => {
      const enabled = await ok(
        url,
        "POST",
        `${bankPath(banks.a)}/repos/enable`,
        JSON.stringify({ repo_name: "isolation" })
      )
      const repoId = JSON.parse(enabled.body.toString("utf8")).repo_id
      const branch = await ok(
        url,
        "POST",
        `/v1/default/repos/${repoId}/branches`,
        JSON.stringify({ branch_name: "side" })
      )
      return `enable ${seconds(enabled.ms)}, branch ${seconds(branch.ms)}`
    }
  },
  {
    name: `9 ${settings.clients} clients, mixed 80/20, over ${banks.a}, ${banks.large}, ${banks.obs}`,
    prepare: async (url) => {
      const others = [banks.a, banks.large, banks.obs]
      const rng = random(41)
      let turn = settings.large + 10_000
      const next = (client: number): Call => {
        const bankId = others[client % others.length]!
        return rng() < 0.2
          ? {
            kind: "retain",
            method: "POST",
            path: `${bankPath(bankId)}/memories`,
            body: retainBody(streams.a, turn++, 1)
          }
          : {
            kind: "recall",
            method: "POST",
            path: `${bankPath(bankId)}/memories/recall`,
            body: JSON.stringify({ query: questions[Math.floor(rng() * questions.length)]! })
          }
      }
      // The clients run in a child process, so their answers do not hold up this process's loop, which times B.
      const calls = Array.from({ length: 20_000 }, (_, index) => next(index))
      const jobFile = join(tempDir("engram-isolation-load-"), "job.json")
      writeFileSync(
        jobFile,
        JSON.stringify({
          url,
          authorization: benchHeaders["authorization"]!,
          clients: settings.clients,
          seconds: settings.loadSeconds,
          calls
        })
      )
      return async () => {
        const result = JSON.parse(
          (await runScript(root, "bench/support/LoadSender.ts", [jobFile], {})).trim().split("\n").at(-1)!
        ) as {
          seconds: number
          byKind: Array<{ kind: string; completed: number; errors: number; firstError?: string }>
        }
        removeDir(dirname(jobFile))
        const completed = result.byKind.reduce((sum, s) => sum + s.completed, 0)
        const errors = result.byKind.reduce((sum, s) => sum + s.errors, 0)
        const first = result.byKind.find((s) => s.firstError !== undefined)?.firstError
        return `${fmt(completed / result.seconds)} req/s, ${errors} errors on A's side${
          first === undefined ? "" : ` (first: ${first.slice(0, 120)})`
        }`
      }
    }
  },
  hostileBodies,
  {
    // Last: it empties the large bank the earlier phases read. Issue 38: B's recall during a sweep of ~100k memories.
    name: `12 retention sweep of ${banks.large} down to ${k(settings.keptAfterSweep)} memories (evicts ~${
      k(settings.large - settings.keptAfterSweep)
    })`,
    prepare: async (url) => {
      const before = (await okJson(url, "GET", `${bankPath(banks.large)}/stats`)).total_nodes as number
      return async () => {
        await okJson(url, "PATCH", `${bankPath(banks.large)}/config`, {
          updates: { retention: { max_memories: settings.keptAfterSweep } }
        })
        // The sweep's own operation is waited for (one row read every 200 ms): `/stats`, polled here before, counts
        // every link of the bank (2.5M at 100k) three times a call, and that was most of the server's CPU and reads.
        const queuedBy = performance.now() + 60_000
        let operation: { id: string } | undefined
        while (operation === undefined) {
          const listed = await okJson(
            url,
            "GET",
            `${bankPath(banks.large)}/operations?task_type=retention_sweep&limit=1`
          )
          operation = (listed.operations as Array<{ id: string }>)[0]
          if (operation !== undefined) break
          if (performance.now() > queuedBy) throw new Error("no retention sweep was queued")
          await sleep(200)
        }
        await waitOperation(url, banks.large, operation.id)
        const result = await okJson(url, "GET", `${bankPath(banks.large)}/operations/${operation.id}/result`)
        const deleted = Number((result.result as { memories_deleted?: number } | null)?.memories_deleted ?? Number.NaN)
        return `${before.toLocaleString("en")} → ${(before - deleted).toLocaleString("en")} memories`
      }
    }
  }
]

const quiet = (name: string): Phase => ({
  name,
  prepare: async () => async () => {
    await sleep(settings.quietSeconds * 1000)
    return "nothing"
  }
})

/** PGlite only: `--data-dir DIR` seeds DIR once and keeps it, so an A/B comparison does not reseed each run. */
const keptSeed = (dataDir: string) => join(dataDir, "isolation-seed.json")

const seed = async (backend: Backend) => {
  const kept = backend.url === undefined ? settings.dataDir : undefined
  if (kept !== undefined && existsSync(keptSeed(kept))) {
    log(`reusing the banks seeded in ${kept}`)
    const seeded = JSON.parse(readFileSync(keptSeed(kept), "utf8")) as SeededBanks
    return { dataDir: kept, env: serverEnv(backend, undefined), seeded, seedSeconds: 0, drop: async () => {} }
  }
  const dataDir = kept ?? tempDir("engram-isolation-")
  const schema = backend.url === undefined ? undefined : tempSchema(backend.url, "engram_isolation_")
  const job: SeedJob = {
    dataDir,
    endsAt: new Date(Date.now() - 10 * 60_000).toISOString(),
    ...(backend.url === undefined ? {} : { databaseUrl: backend.url, databaseSchema: schema! }),
    banks: [
      { bankId: banks.a, memories: settings.memories, streamSeed: streams.a, consolidated: true },
      { bankId: banks.obs, memories: settings.memories, streamSeed: streams.obs, consolidated: true },
      { bankId: banks.large, memories: settings.large, streamSeed: streams.large, consolidated: true }
    ]
  }
  log(`seeding ${k(settings.memories)} + ${k(settings.memories)} + ${k(settings.large)} memories on ${backend.name}`)
  const t0 = performance.now()
  const stdout = await runScript(root, "bench/support/seed.ts", [JSON.stringify(job)], {
    SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir
  })
  const seeded = JSON.parse(stdout.trim().split("\n").at(-1)!) as SeededBanks
  const seedSeconds = (performance.now() - t0) / 1000
  log(`seeded in ${seedSeconds.toFixed(0)} s`)
  const env = serverEnv(backend, schema)
  if (kept !== undefined) {
    writeFileSync(keptSeed(kept), JSON.stringify(seeded))
    return { dataDir, env, seeded, seedSeconds, drop: async () => {} }
  }
  const drop = async () => {
    removeDir(dataDir)
    if (backend.url === undefined) return
    const dropJob: DropJob = { databaseUrl: backend.url, dropSchemas: [schema!] }
    await runScript(root, "bench/support/seed.ts", [JSON.stringify(dropJob)], {
      SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir
    })
  }
  return { dataDir, env, seeded, seedSeconds, drop }
}

type SeededBanks = Array<{ bankId: string; memories: number; links: number }>

const serverEnv = (backend: Backend, schema: string | undefined): Record<string, string> => ({
  SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir,
  // A 100k bank's `.brain` file is tens of MB: above the default request limit.
  SERVICE_API_MAX_REQUEST_BYTES: String(1024 * 1024 * 1024),
  SERVICE_API_TENANT_EXTENSION: "api_key",
  SERVICE_API_TENANT_API_KEY: apiKey,
  ...(backend.url === undefined
    ? {}
    : { SERVICE_API_DATABASE_URL: backend.url, SERVICE_API_DATABASE_SCHEMA: schema! })
})

const runBackend = async (backend: Backend) => {
  const seeded = await seed(backend)
  let server: Server | undefined
  try {
    server = await startServer(root, seeded.dataDir, seeded.env, settings.serverArgs)
    log(`server ready on ${backend.name}`)
    const version = (await okJson(server.url, "GET", "/version")).api_version ?? "?"
    // A's banks write without consolidating (except the consolidation phase's own bank), so no phase inherits it.
    for (const bankId of [banks.a, banks.large]) {
      await okJson(server.url, "PUT", bankPath(bankId), { enable_observations: false })
    }
    // A kept data directory holds the last run's bank B: start it afresh, so every run recalls the same bank.
    if (settings.dataDir !== undefined) await call(jobAgent, server.url, "DELETE", bankPath(banks.b))
    await seedOverHttp(server.url, bankPath(banks.b), settings.bMemories)
    for (const recall of bRecalls().slice(0, 20)) {
      await call(jobAgent, server.url, recall.method, recall.path, recall.body)
    }
    const rows: Array<Row> = [await measure(server.url, server.pid, quiet("0 quiet (baseline)"))]
    const chosen = phases.filter((phase) => settings.phases?.includes(phase.name.split(" ")[0]!) ?? true)
    for (const phase of chosen) {
      await settle(server.url)
      rows.push(await measure(server.url, server.pid, phase))
    }
    await settle(server.url)
    rows.push(await measure(server.url, server.pid, quiet("quiet again, after every phase")))
    return { rows, version, seeded }
  } catch (error) {
    if (server !== undefined) console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server?.stop()
    await seeded.drop()
  }
}

const report = (backend: Backend, result: Awaited<ReturnType<typeof runBackend>>) => {
  const { rows, version, seeded } = result
  const quietP99 = percentile(rows[0]!.recall.latencies, 0.99)
  const sizes = seeded.seeded.map((s) =>
    `${s.bankId} ${s.memories.toLocaleString("en")} memories (${s.links.toLocaleString("en")} links)`
  )
  console.log("")
  console.log(`## ${backend.name}: engram ${version}, offline defaults (GloVe, no LLM)`)
  console.log(
    `B: ${settings.bMemories} memories retained over HTTP, one client recalling in sequence (budget low, ${questions.length} ` +
      `questions in turn), /health polled every ~50 ms. A's banks seeded directly in ${fmt(seeded.seedSeconds, 0)} s: ${
        sizes.join(", ")
      }. ` +
      `Each window lasts A's job and at least ${settings.minWindowSeconds} s. "bench loop max": the longest a probe process's own ` +
      "event loop was held up in the window (it delays every latency measured here, whatever the server does). B's client " +
      "is sequential, so a stall of any length is one sample: read max beside p99."
  )
  console.log(
    `Targets: B recall p99 ≤ ${target.ratio} × the quiet p99; /health p99 ≤ ${target.healthP99} ms; 0 failed requests; 0 connection resets.`
  )
  console.log("")
  console.log(
    "| phase | A's job | B recalls | p50 ms | p99 ms | max ms | p99 / quiet | /health p99 ms | /health max ms | failed | resets | bench loop max ms | server CPU s | server read MB | result |"
  )
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  const notes: Array<string> = []
  for (const row of rows) {
    const r = row.recall.latencies
    const h = row.health.latencies
    const p99 = percentile(r, 0.99)
    const ratio = p99 / quietP99
    const failed = row.recall.failed + row.health.failed
    const resets = row.recall.resets + row.health.resets
    const misses = [
      Math.round(ratio * 100) / 100 <= target.ratio ? undefined : "p99",
      percentile(h, 0.99) <= target.healthP99 ? undefined : "health",
      failed === 0 ? undefined : "failed",
      resets === 0 ? undefined : "resets"
    ].filter((m) => m !== undefined)
    const measured = r.length > 0
    const result = !measured ? "not measured" : misses.length === 0 ? "PASS" : `FAIL (${misses.join(", ")})`
    const job = row.error === undefined
      ? `${fmt(row.jobSeconds)} s: ${row.detail}`
      : `FAILED${Number.isFinite(row.jobSeconds) ? ` after ${fmt(row.jobSeconds)} s` : ""} (note ${notes.length + 1})`
    if (row.error !== undefined) notes.push(`${row.name}: ${row.error}`)
    for (const probe of [row.recall, row.health]) {
      if (probe.firstError !== undefined) notes.push(`${row.name}: first failure: ${probe.firstError}`)
    }
    console.log(
      `| ${row.name} | ${job} | ${r.length} | ${fmt(percentile(r, 0.5))} | ${fmt(p99)} | ${fmt(percentile(r, 1))} | ` +
        `${fmt(ratio, 2)} | ${fmt(percentile(h, 0.99))} | ${fmt(percentile(h, 1))} | ${failed} | ${resets} | ${
          fmt(row.clientDelayMs, 0)
        } | ${fmt(row.serverCpuSeconds, 2)} | ${fmt(row.serverReadMb, 0)} | ${result} |`
    )
  }
  console.log(
    "| 10 VACUUM (ANALYZE) | skipped: no route runs it (the server runs it itself after a table grows by a fifth, src/storage/TableStatistics.ts) | | | | | | | | | | | | | not measured |"
  )
  if (notes.length > 0) {
    console.log("")
    notes.forEach((note, i) => console.log(`${i + 1}. ${note}`))
  }
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

const loads: Array<number> = [loadavg()[0]!]
setInterval(() => loads.push(loadavg()[0]!), 5000).unref()

const main = async () => {
  const commit = git(["rev-parse", "--short", "HEAD"]) ?? "unknown"
  const changed = git(["status", "--porcelain"])
  const dirty = changed === null
    ? ""
    : changed === ""
    ? ", clean tree"
    : `, plus ${changed.split("\n").length} uncommitted paths`
  console.log(
    `# engram isolation bench${quick ? " (--quick)" : ""}: ${
      new Date().toISOString().slice(0, 16).replace("T", " ")
    } UTC, ` +
      `commit ${commit}${dirty}, Node ${process.version}, ${cpus().length} cores, load average ${
        loadavg()[0]!.toFixed(1)
      } at start`
  )
  const backends: Array<Backend> = settings.pg !== undefined && settings.pgOnly ? [] : [{ name: "PGlite (embedded)" }]
  if (settings.pg !== undefined) backends.push({ name: "PostgreSQL", url: settings.pg })
  for (const backend of backends) report(backend, await runBackend(backend))
  console.log("")
  console.log(
    `run time ${((performance.now() - started) / 60_000).toFixed(1)} min; 1-min load average during the run ` +
      `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`
  )
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
