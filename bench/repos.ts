/**
 * Memory repos on seeded banks (10k and 100k memories by default: real offline-extractor facts, GloVe vectors,
 * retain's link policy), over loopback HTTP against the server as a child process (`node src/main.ts`, PGlite):
 * the first commit (enable) with bank B's recall p99 while it runs against its quiet p99, status after one retained
 * memory, a second commit of it (its bytes must stay under 1 % of the first's: only changed rows and bucket
 * manifests are stored), a clean status, a row-level diff of the two commits, branch creation, a checkout there and
 * back, a checkout between branches ten memories apart, the first recall by `branch_name` of a branch never read
 * (its read copy made) with bank B's longest one-item retain meanwhile, and a hard reset of one uncommitted memory.
 * Rerun: `node bench/repos.ts [memories ...] [--commits-only] [--bank-dir DIR] [--bank-id ID]`; `BENCH_DATABASE_URL=postgres://…` runs
 * it on PostgreSQL. `--bank-dir DIR` seeds each size once into DIR (on PostgreSQL, a kept schema) and reuses it: a
 * bank whose repo is already enabled skips the first commit (its figures print as –), and each run's branches get
 * names of their own and are deleted at the end, so the next run starts from main again. After each retain the bench
 * waits for the bank's background operations to finish, so a repo operation is not measured beside consolidation;
 * the repo garbage collector runs as it would for a user (30 s after the first commit, in slices that wait for a
 * lull in requests), and so does the access telemetry of bank B's recalls.
 */
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { prepareDatasets } from "./support/Datasets.ts"
import { percentile, send } from "./support/LoadClient.ts"
import { removeDir, startServer } from "./support/ServerProcess.ts"

const root = resolve(import.meta.dirname, "..")
const sizes = process.argv.slice(2).filter((arg) => /^\d+$/.test(arg)).map(Number)
const runs = sizes.length > 0 ? sizes : [10_000, 100_000]
/** `--commits-only`: stop after the commits, status and diff (branch and checkouts copy or hash the whole bank). */
const commitsOnly = process.argv.includes("--commits-only")
const bankDirAt = process.argv.indexOf("--bank-dir")
const bankDir = bankDirAt < 0 ? undefined : resolve(process.argv[bankDirAt + 1]!)
/**
 * `--bank-id ID`: the bank to version (default `repos`). With `--bank-dir`, a bank another bench seeded the same way
 * (`bench/support/seed.ts`) can be used: put its data directory at `DIR/pglite-ID-SIZE` with a `seeded.json`.
 */
const bankIdAt = process.argv.indexOf("--bank-id")
const bankId = bankIdAt < 0 ? "repos" : process.argv[bankIdAt + 1]!
const bank = `/v1/default/banks/${bankId}`
const cacheDir = process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
const started = performance.now()
const log = (message: string) =>
  console.error(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`)

const call = async (url: string, method: string, path: string, body?: unknown) => {
  const answer = await send(url, { method, path, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  if (answer.status !== 200) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`)
  }
  return { ms: answer.ms, body: JSON.parse(answer.body) as any }
}

interface Row {
  readonly memories: number
  readonly rows: number
  readonly first: { ms: number; bytes: number }
  readonly statusDirty: number
  readonly second: { ms: number; bytes: number }
  readonly statusClean: number
  readonly diff: number
  readonly diffRows: number
  readonly branch: number
  readonly checkout: number
  readonly checkoutBack: number
  readonly checkout10: number
  /** A recall by `branch_name` of a branch never read before: its read copy is made (the whole branch copied). */
  readonly firstBranchRead: number
  /** Bank B's longest one-item retain before the first branch read, and while it ran. */
  readonly retainQuiet: number
  readonly retainDuringFirstRead: number
  readonly reset: number
  readonly recallQuiet: number
  readonly recallDuringEnable: number
}

/**
 * Waits until the bank has no pending or running operation: a retain queues background work (consolidation) that,
 * measured beside a repo operation, was most of a status or a checkout on the embedded tier's one session.
 */
const settled = async (url: string) => {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const listed = await call(url, "GET", `${bank}/operations?limit=1000`)
    if (!listed.body.operations.some((op: any) => op.status === "pending" || op.status === "running")) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("the retain's background work did not finish in 120 s")
}

/** Bank B: a small bank beside the repo's, recalled in a loop to show what a repo operation costs the others. */
const otherBank = "repos-other"
const other = `/v1/default/banks/${otherBank}`
const recallOther = (url: string) =>
  send(url, {
    method: "POST",
    path: `${other}/memories/recall`,
    body: JSON.stringify({ query: "harbour lighthouse keeper" })
  })

const recallP99 = async (url: string, until: () => boolean, minimum: number) => {
  const samples: Array<number> = []
  while (samples.length < minimum || !until()) {
    const answer = await recallOther(url)
    if (answer.status !== 200) throw new Error(`bank B recall answered ${answer.status}`)
    samples.push(answer.ms)
  }
  return percentile(samples, 0.99)
}

/**
 * Bank B's one-item retains, one after another, until `until()` holds (at least `minimum`): the longest. A retain
 * needs the database, so on the embedded tier it shows how long another bank's repo job holds the one session.
 */
const retainMax = async (url: string, until: () => boolean, minimum: number) => {
  let longest = 0
  for (let n = 0; n < minimum || !until(); n++) {
    const answer = await send(url, {
      method: "POST",
      path: `${other}/memories`,
      body: JSON.stringify({ items: [{ content: `Harbour log ${Date.now()}-${n}: the pilot boat came in at dusk.` }] })
    })
    if (answer.status !== 200) throw new Error(`bank B retain answered ${answer.status}`)
    longest = Math.max(longest, answer.ms)
  }
  return longest
}

/**
 * Words that make a held bank's retained memories new in every run (the same sentence again would be skipped as a
 * duplicate, and the commit would store nothing); a fresh bank gets the original words.
 */
const variantOf = (held: boolean) => {
  if (!held) return { job: "lighthouse keeper", town: "Brest", deed: "repainted the lamp room" }
  const n = Math.floor(Date.now() / 1000)
  const pick = (words: ReadonlyArray<string>, k: number) => words[Math.floor(n / k) % words.length]!
  return {
    job: pick(["ferryman", "glassblower", "cartographer", "beekeeper", "stonemason", "falconer", "tanner"], 1),
    town: pick(["Galway", "Tromsø", "Porto", "Gdańsk", "Valletta", "Hobart", "Kotor", "Reykjavik", "Tallinn"], 7),
    deed: pick(["mended the copper kettles", "charted the eastern shoals", "sold honey at the market"], 63)
  }
}

const measure = async (memories: number, dataDir: string, env: Record<string, string>, held: boolean): Promise<Row> => {
  log(`${memories}: starting the server`)
  const server = await startServer(root, dataDir, { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir, ...env })
  try {
    const url = server.url
    const variant = variantOf(held)
    const heldRepo = held ? (await call(url, "GET", `${bank}/repo`)).body.repo : null
    if (heldRepo === null) {
      await call(url, "PUT", other, { name: "bank B" })
      await call(url, "POST", `${other}/memories`, {
        items: Array.from(
          { length: 40 },
          (_, i) => ({ content: `Harbour note ${i}: the lighthouse keeper logged ship ${i} at dawn.` })
        )
      })
    }
    // B's first recalls build its brain: warm it first, or its quiet p99 is that build's time.
    await recallP99(url, () => true, 30)
    const recallQuiet = await recallP99(url, () => true, 60)
    let enabling = true
    const during = heldRepo === null ? recallP99(url, () => !enabling, 20) : Promise.resolve(Number.NaN)
    const enabled = heldRepo === null
      ? await call(url, "POST", `${bank}/repos/enable`, { repo_name: "bench" }).finally(() => {
        enabling = false
      })
      : { ms: Number.NaN, body: heldRepo }
    const recallDuringEnable = await during
    const repoId = enabled.body.repo_id as string
    const repo = `/v1/default/repos/${repoId}`
    if (heldRepo !== null && heldRepo.active_branch !== "main") {
      await call(url, "POST", `${repo}/checkout`, { branch_name: "main" })
    }
    const firstLog = await call(url, "GET", `${repo}/log?limit=200`)
    const firstCommit = firstLog.body.commits.at(-1)
    const rows = Object.values(firstCommit.stats.rows as Record<string, number>).reduce((a, b) => a + b, 0)
    log(
      `${memories}: first commit ${
        enabled.ms.toFixed(0)
      } ms, ${firstCommit.stats.bytes_added} bytes; bank B recall p99 ` +
        `${recallQuiet.toFixed(0)} ms quiet, ${recallDuringEnable.toFixed(0)} ms during it`
    )
    const previousHead = firstLog.body.commits[0]
    await call(url, "POST", `${bank}/memories`, {
      items: [{
        content: `The repo benchmark added exactly one new memory about a ${variant.job} in ${variant.town}.`
      }]
    })
    await settled(url)
    const statusDirty = await call(url, "GET", `${repo}/status`)
    if (statusDirty.body.dirty !== true) throw new Error("status after a retain is not dirty")
    log(`${memories}: status after one memory ${statusDirty.ms.toFixed(0)} ms`)
    const second = await call(url, "POST", `${repo}/commit`, { message: "one memory" })
    log(`${memories}: second commit ${second.ms.toFixed(0)} ms, ${second.body.stats.bytes_added} bytes`)
    const status = await call(url, "GET", `${repo}/status`)
    log(`${memories}: clean status ${status.ms.toFixed(0)} ms`)
    const diff = await call(
      url,
      "GET",
      `${repo}/diff?from_commit_id=${previousHead.commit_id}&to_commit_id=${second.body.commit_id}&rows=true`
    )
    log(`${memories}: diff ${diff.ms.toFixed(0)} ms, ${diff.body.rows.total} rows`)
    const skipped = { ms: Number.NaN }
    if (commitsOnly) {
      return {
        memories,
        rows,
        first: { ms: enabled.ms, bytes: firstCommit.stats.bytes_added },
        statusDirty: statusDirty.ms,
        second: { ms: second.ms, bytes: second.body.stats.bytes_added },
        statusClean: status.ms,
        diff: diff.ms,
        diffRows: diff.body.rows.total,
        branch: skipped.ms,
        checkout: skipped.ms,
        checkoutBack: skipped.ms,
        checkout10: skipped.ms,
        firstBranchRead: skipped.ms,
        retainQuiet: skipped.ms,
        retainDuringFirstRead: skipped.ms,
        reset: skipped.ms,
        recallQuiet,
        recallDuringEnable
      }
    }
    const side = held ? `side-${Date.now().toString(36)}` : "side"
    const branch = await call(url, "POST", `${repo}/branches`, { branch_name: side })
    log(`${memories}: branch ${branch.ms.toFixed(0)} ms`)
    const unread = `${side}-read`
    await call(url, "POST", `${repo}/branches`, { branch_name: unread })
    const retainQuiet = await retainMax(url, () => true, 10)
    let reading = true
    const retainDuringRead = retainMax(url, () => !reading, 1)
    const firstBranchRead = await call(url, "POST", `${bank}/memories/recall`, {
      query: `Where did the ${variant.job} work?`,
      branch_name: unread
    }).finally(() => {
      reading = false
    })
    const retainDuringFirstRead = await retainDuringRead
    log(
      `${memories}: first recall by branch_name (its read copy made) ${firstBranchRead.ms.toFixed(0)} ms; ` +
        `bank B one-item retain max ${retainQuiet.toFixed(0)} ms quiet, ${
          retainDuringFirstRead.toFixed(0)
        } ms during it`
    )
    await call(url, "DELETE", `${repo}/branches/${unread}`)
    const checkout = await call(url, "POST", `${repo}/checkout`, { branch_name: side })
    const back = await call(url, "POST", `${repo}/checkout`, { branch_name: "main" })
    log(`${memories}: checkout ${checkout.ms.toFixed(0)} ms, back ${back.ms.toFixed(0)} ms`)
    // Ten memories committed on `side`: the checkout between the two branches moves them (and their links).
    await call(url, "POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: side })
    await call(url, "POST", `${bank}/memories`, {
      items: Array.from(
        { length: 10 },
        (_, i) => ({ content: `Side branch note ${i}: ${variant.job} ${i} ${variant.deed} in ${variant.town}.` })
      )
    })
    await settled(url)
    await call(url, "POST", `${repo}/commit`, { message: "ten memories" })
    const checkout10 = await call(url, "POST", `${repo}/checkout`, { branch_name: "main" })
    log(`${memories}: checkout between branches 10 memories apart ${checkout10.ms.toFixed(0)} ms`)
    await call(url, "POST", `${bank}/memories`, {
      items: [{ content: `An uncommitted note the reset throws away, about a ${variant.job} in ${variant.town}.` }]
    })
    await settled(url)
    const reset = await call(url, "POST", `${repo}/reset-hard`, { commit_id: second.body.commit_id, force: true })
    log(`${memories}: hard reset of one memory ${reset.ms.toFixed(0)} ms`)
    if (held) await call(url, "DELETE", `${repo}/branches/${side}`)
    return {
      memories,
      rows,
      first: { ms: enabled.ms, bytes: firstCommit.stats.bytes_added },
      statusDirty: statusDirty.ms,
      second: { ms: second.ms, bytes: second.body.stats.bytes_added },
      statusClean: status.ms,
      diff: diff.ms,
      diffRows: diff.body.rows.total,
      branch: branch.ms,
      checkout: checkout.ms,
      checkoutBack: back.ms,
      checkout10: checkout10.ms,
      firstBranchRead: firstBranchRead.ms,
      retainQuiet,
      retainDuringFirstRead,
      reset: reset.ms,
      recallQuiet,
      recallDuringEnable
    }
  } catch (error) {
    console.error(`server log (tail):\n${server.logTail()}`)
    throw error
  } finally {
    await server.stop()
    if (!held) removeDir(dataDir)
  }
}

/** `BENCH_DATABASE_URL` runs the bench on PostgreSQL (a fresh schema per run) instead of embedded PGlite. */
const databaseUrl = process.env["BENCH_DATABASE_URL"]
const backend = databaseUrl === undefined ? { name: "PGlite" } : { name: "PostgreSQL", url: databaseUrl }

const main = async () => {
  const datasets = await prepareDatasets({
    root,
    backend,
    runs,
    bankId,
    streamSeed: 3,
    env: { SERVICE_API_EMBEDDINGS_CACHE_DIR: cacheDir },
    log,
    ...(bankDir === undefined ? {} : { heldDir: bankDir })
  })
  const results: Array<Row> = []
  for (const memories of runs) {
    const dataset = datasets.take(memories)
    results.push(await measure(memories, dataset.dataDir, dataset.env, dataset.held))
  }
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1)
  const ms = (value: number) => Number.isNaN(value) ? "–" : value.toFixed(0)
  console.log(
    `repos: ${backend.name}, offline GloVe, one client; times in ms (s where marked); bytes = objects newly stored`
  )
  console.log(
    "| memories | versioned rows | first commit | first bytes | status, 1 change | 2nd commit (1 memory) | 2nd bytes | 2nd / 1st bytes | clean status | diff (rows) | branch | checkout / back | checkout, 10 memories apart | first read by `branch_name` | bank B retain max quiet / during it | hard reset | bank B recall p99 quiet / during enable |"
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of results) {
    console.log(
      `| ${r.memories} | ${r.rows} | ${Number.isNaN(r.first.ms) ? "–" : (r.first.ms / 1000).toFixed(1)} s | ${
        mb(r.first.bytes)
      } MB | ${ms(r.statusDirty)} | ` +
        `${ms(r.second.ms)} | ${(r.second.bytes / 1024).toFixed(1)} KB | ${
          (100 * r.second.bytes / r.first.bytes).toFixed(3)
        } % | ` +
        `${ms(r.statusClean)} | ${ms(r.diff)} (${r.diffRows}) | ${ms(r.branch)} | ${ms(r.checkout)} / ${
          ms(r.checkoutBack)
        } | ` +
        `${ms(r.checkout10)} | ${ms(r.firstBranchRead)} | ${ms(r.retainQuiet)} / ${ms(r.retainDuringFirstRead)} | ${
          ms(r.reset)
        } | ${ms(r.recallQuiet)} / ${ms(r.recallDuringEnable)} (${
          (r.recallDuringEnable / r.recallQuiet).toFixed(1)
        }×) |`
    )
  }
  const failed = results.filter((r) => r.second.bytes >= r.first.bytes / 100)
  if (failed.length > 0) {
    throw new Error(`second commit stored ≥ 1 % of the first at ${failed.map((r) => r.memories).join(", ")}`)
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
