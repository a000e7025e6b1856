/**
 * Async retain throughput across 20 banks with one runner vs two runners (separate processes, one PostgreSQL,
 * each runner pinned to its own core with `taskset`, so the figure stands for two machines). A client node takes
 * the requests; the figure is items stored per second from the first request to the last completed operation.
 *
 *   node bench/cluster.ts [requestsPerBank=6] [itemsPerRequest=10]
 *
 * Each result also says where the CPU went meanwhile (core-seconds per node, all of PostgreSQL, the machine).
 *
 * Needs PostgreSQL: ENGRAM_BENCH_DATABASE_URL (default postgres://engram:engram@127.0.0.1:5432/engram_test).
 * Each run uses a fresh schema, dropped when the bench ends.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { openSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { snapshot, usage } from "./CpuAccount.ts"
import { tempDir, tempSchema } from "./support/ServerProcess.ts"
import { waitFor } from "./support/HttpBank.ts"

const requestsPerBank = Number(process.argv[2] ?? 6)
const itemsPerRequest = Number(process.argv[3] ?? 10)
const bankCount = 20
const databaseUrl = process.env["ENGRAM_BENCH_DATABASE_URL"] ?? "postgres://engram:engram@127.0.0.1:5432/engram_test"
const shards = 60

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a node, pinned to a core when one is given; its output goes to `node.log` in its data dir. */
const start = (core: string | undefined, env: Record<string, string>): ChildProcess => {
  const args = [process.execPath, "src/main.ts"]
  const log = openSync(join(env["SERVICE_API_DATA_DIR"]!, "node.log"), "w")
  const options = { env: { ...process.env, ...env }, stdio: ["ignore", log, log] as Array<"ignore" | number> }
  return core === undefined ? spawn(args[0]!, args.slice(1), options) : spawn("taskset", ["-c", core, ...args], options)
}

/**
 * Starts a node and waits until it answers `/health`; a node that exits first (on a loaded machine the database
 * connection can time out at start) is started again, at most three times.
 */
const startHealthy = async (core: string | undefined, node: { url: string; env: Record<string, string> }) => {
  for (let attempt = 1;; attempt++) {
    const child = start(core, node.env)
    const deadline = Date.now() + 120_000
    while (Date.now() < deadline && child.exitCode === null) {
      if ((await health(node.url))?.status === "healthy") return child
      await sleep(250)
    }
    if (child.exitCode === null) child.kill("SIGKILL")
    if (attempt === 3) throw new Error(`node did not start (log: ${node.env["SERVICE_API_DATA_DIR"]}/node.log)`)
  }
}

const health = (url: string) => fetch(`${url}/health`).then((r) => r.json() as Promise<any>).catch(() => undefined)

const run = async (runners: number) => {
  const schema = tempSchema(databaseUrl, `bench_cluster_${runners}_`)
  const shared = {
    SERVICE_API_DATABASE_URL: databaseUrl,
    SERVICE_API_DATABASE_SCHEMA: schema,
    SERVICE_API_ENABLE_OBSERVATIONS: "false",
    SERVICE_API_CLUSTER_SHARDS: String(shards),
    // Every node of a cluster shares one secret; a fresh random one per run.
    SERVICE_API_CLUSTER_SECRET: randomBytes(24).toString("base64url")
  }
  const node = async (mode: "runner" | "client") => {
    const port = await freePort()
    return {
      url: `http://127.0.0.1:${port}`,
      env: {
        ...shared,
        SERVICE_API_CLUSTER_MODE: mode,
        SERVICE_API_PORT: String(port),
        SERVICE_API_CLUSTER_PORT: String(await freePort()),
        SERVICE_API_DATA_DIR: tempDir("engram-bench-cluster-")
      }
    }
  }
  const children: Array<ChildProcess> = []
  try {
    const first = await node("runner")
    children.push(await startHealthy("0", first))
    const runnerUrls = [first.url]
    if (runners === 2) {
      const second = await node("runner")
      children.push(await startHealthy("1", second))
      runnerUrls.push(second.url)
    }
    const client = await node("client")
    children.push(await startHealthy(undefined, client))
    await waitFor("every shard owned", async () => {
      const reports = await Promise.all(runnerUrls.map(health))
      const owned = reports.map((report) => report?.cluster?.shards_owned ?? 0)
      return owned.every((count) => count > 0) && owned.reduce((a, b) => a + b, 0) === shards
    })
    await waitFor("the client", async () => (await health(client.url))?.status === "healthy")

    const banks = Array.from({ length: bankCount }, (_, n) => `bench-${n}`)
    for (const bank of banks) {
      await fetch(`${client.url}/v1/default/banks/${bank}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: bank })
      })
    }
    let next = 0
    // taskset execs node in its own process, so each child's pid is the node's.
    const roles = new Map(
      children.map((child, n) => [n === children.length - 1 ? "client" : `runner${n + 1}`, child.pid!])
    )
    roles.set("bench", process.pid)
    const cpuBefore = snapshot(roles)
    const began = performance.now()
    const operations: Array<[string, string]> = []
    for (let round = 0; round < requestsPerBank; round++) {
      await Promise.all(banks.map(async (bank) => {
        const items = Array.from({ length: itemsPerRequest }, () => next++).map((n) => ({
          content: `Reading ${n}: sensor ${n} in greenhouse ${n % 13} measured ${(n * 7) % 31} degrees on day ${
            n % 29
          }.`,
          metadata: { n: String(n) }
        }))
        const response = await fetch(`${client.url}/v1/default/banks/${bank}/memories`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ async: true, items })
        }).then((r) => r.json() as Promise<any>)
        operations.push([bank, response.operation_id])
      }))
    }
    const submitted = performance.now()
    await waitFor("every operation completed", async () => {
      const lists = await Promise.all(
        banks.map((bank) =>
          fetch(`${client.url}/v1/default/banks/${bank}/operations?limit=100`).then((r) => r.json() as Promise<any>)
        )
      )
      return lists.every((list) => list.operations.every((op: any) => op.status === "completed"))
    }, 600_000)
    const seconds = (performance.now() - began) / 1000
    const cpu = usage(cpuBefore, snapshot(roles))
    let stored = 0
    for (const bank of banks) {
      const list = await fetch(`${client.url}/v1/default/banks/${bank}/memories/list?limit=1`)
        .then((r) => r.json() as Promise<any>)
      stored += list.total
    }
    return {
      runners,
      items: next,
      stored,
      seconds,
      submitSeconds: (submitted - began) / 1000,
      operations: operations.length,
      cpu
    }
  } finally {
    for (const child of children) child.kill("SIGTERM")
    await sleep(3000)
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  }
}

const only = process.env["ENGRAM_BENCH_RUNNERS"]
const one = only === "2" ? undefined : await run(1)
if (one) console.log(JSON.stringify(one))
const two = only === "1" ? undefined : await run(2)
if (two) console.log(JSON.stringify(two))
if (one === undefined || two === undefined) process.exit(0)
const rate = (r: typeof one) => r.stored / r.seconds
console.log(
  `async retain, ${bankCount} banks, ${one.items} items: one runner ${rate(one).toFixed(1)} items/s, ` +
    `two runners ${rate(two).toFixed(1)} items/s, ratio ${(rate(two) / rate(one)).toFixed(2)} ` +
    `(lost: ${one.items - one.stored} / ${two.items - two.stored})`
)
