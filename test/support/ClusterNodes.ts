/** Starting engram cluster nodes as child processes over one PostgreSQL schema, and polling them, for the cluster tests. */
import { Duration, Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Child, freePorts, spawnService, waitForHealth } from "./ChildService.ts"
import { freshSchemaName } from "./TestRun.ts"
import { eventuallyAsync } from "./TestTasks.ts"

export const request = (url: string, method: string, body?: unknown) =>
  Effect.promise(() =>
    fetch(url, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, body: await response.json().catch(() => null) as any }))
  )

/** Polls `check` until it answers something, failing with the child's last output after `timeoutMs`. */
export const until = <A>(what: string, check: () => Promise<A | undefined>, timeoutMs: number, child?: Child) =>
  eventuallyAsync(() => check().catch(() => undefined), (value) => value !== undefined, Duration.millis(timeoutMs), {
    what,
    interval: "200 millis",
    ...(child === undefined ? {} : { context: () => child.output().slice(-4000) })
  }).pipe(Effect.map((value) => value!))

export const health = (url: string) => fetch(`${url}/health`).then((response) => response.json() as Promise<any>)

export const metricsOf = (url: string) => fetch(`${url}/metrics`).then((response) => response.text())

/** The secret every node of a test cluster shares (SERVICE_API_CLUSTER_SECRET). */
export const clusterSecret = "test-cluster-secret-7f3a9c"

export interface ClusterNodeProcess {
  readonly child: Child
  readonly url: string
  /** Where the node's cluster socket listens (a runner's; a client listens on none). */
  readonly clusterPort: number
}

/**
 * A fresh schema on `databaseUrl` and a function that starts a node of it (`nodeEnv` overrides the cluster's
 * environment for that node only). The first node started migrates the schema: start the others once it is healthy.
 */
export const makeCluster = (databaseUrl: string, shards: number, extra: Record<string, string> = {}) => {
  const schema = freshSchemaName()
  /** Starts a node's process without waiting for it to serve (a node expected to refuse to start). */
  const spawn = (mode: "runner" | "client", nodeEnv: Record<string, string> = {}) =>
    Effect.gen(function*() {
      const ports = yield* freePorts(2)
      const port = ports[0]!
      const clusterPort = ports[1]!
      const child = yield* spawnService("src/main.ts", {
        SERVICE_API_DATABASE_URL: databaseUrl,
        SERVICE_API_DATABASE_SCHEMA: schema,
        SERVICE_API_ENABLE_OBSERVATIONS: "false",
        SERVICE_API_CLUSTER_SHARDS: String(shards),
        SERVICE_API_CLUSTER_HEALTH_CHECK_INTERVAL: "2 seconds",
        // A killed runner's shards move after about this long (35 s by default): the kill tests wait for it.
        SERVICE_API_CLUSTER_SHARD_LOCK_EXPIRATION: "10 seconds",
        SERVICE_API_CLUSTER_MODE: mode,
        SERVICE_API_PORT: String(port),
        SERVICE_API_CLUSTER_PORT: String(clusterPort),
        SERVICE_API_CLUSTER_SECRET: clusterSecret,
        SERVICE_API_DATA_DIR: mkdtempSync(join(tmpdir(), "engram-cluster-")),
        ...extra,
        ...nodeEnv
      })
      return { child, url: `http://127.0.0.1:${port}`, clusterPort } satisfies ClusterNodeProcess
    })
  const start = (mode: "runner" | "client", nodeEnv: Record<string, string> = {}) =>
    Effect.gen(function*() {
      const node = yield* spawn(mode, nodeEnv)
      yield* waitForHealth(node.url, node.child)
      return node
    })
  return { schema, spawn, start }
}

/** Waits until the runners together own every shard and each owns some. */
export const shardsSpread = (runners: ReadonlyArray<ClusterNodeProcess>, shards: number) =>
  until(
    "shards spread over the runners",
    async () => {
      const owned = await Promise.all(
        runners.map(async (runner) => (await health(runner.url)).cluster?.shards_owned ?? 0)
      )
      return owned.every((count) => count > 0) && owned.reduce((a, b) => a + b, 0) === shards ? true : undefined
    },
    60_000,
    runners.at(-1)?.child
  )
