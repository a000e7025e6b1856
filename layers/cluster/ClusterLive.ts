/**
 * The bank actors as configured: in-process (SERVICE_API_CLUSTER_MODE=off, the default, exactly as before), or
 * routed through `effect/cluster` — sockets between nodes authenticated by the cluster secret (ClusterTransport.ts),
 * runner registry, shard locks and message storage in the shared PostgreSQL (SqlRunnerStorage, SqlMessageStorage).
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Effect, Layer, Option, type Redacted } from "effect"
import {
  RunnerAddress,
  RunnerHealth,
  Runners,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "effect/cluster"
import { RpcSerialization } from "effect/rpc"
import { BankActors } from "../../src/bank/BankActors.ts"
import { ClusterBankActorsLayer } from "../../src/cluster/ClusterBankActors.ts"
import { ClusterNode } from "../../src/cluster/ClusterNode.ts"
import type { ClusterSettings } from "../../src/cluster/ClusterSettings.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import * as ClusterTransport from "./ClusterTransport.ts"
import * as SecretFingerprint from "./SecretFingerprint.ts"

/**
 * The cluster's tables are prefixed per database schema: tenants (or test runs) that share one PostgreSQL in
 * separate schemas then also get separate advisory-lock namespaces, which effect/cluster derives from the prefix.
 * A short hash of the schema keeps every derived table and index name within PostgreSQL's 63 characters.
 */
export const clusterTablePrefix = (schema: string) => {
  if (schema === "public") return "cluster"
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(schema)) hash = Math.imul(hash ^ byte, 0x01000193)
  return `cluster_${(hash >>> 0).toString(16).padStart(8, "0")}`
}

const advertisedAddress = (settings: ClusterSettings) =>
  RunnerAddress.make(Option.getOrElse(settings.advertisedHost, () => settings.listenHost), settings.port)

const shardingConfig = (settings: ClusterSettings) => {
  const listen = RunnerAddress.make(settings.listenHost, settings.port)
  const advertised = advertisedAddress(settings)
  const runner = settings.mode === "runner"
  return ShardingConfig.layer({
    runnerAddress: runner ? Option.some(advertised) : Option.none(),
    runnerListenAddress: runner ? Option.some(listen) : Option.none(),
    shardsPerGroup: settings.shards,
    runnerHealthCheckInterval: settings.healthCheckInterval,
    shardLockExpiration: settings.shardLockExpiration,
    // A graceful stop hands shards over at once; a SIGKILLed runner's advisory locks go with its sessions.
    preemptiveShutdown: true
  })
}

const sharding = (settings: ClusterSettings, secret: Redacted.Redacted<string>, schema: string) => {
  const prefix = clusterTablePrefix(schema)
  const client = settings.mode === "client"
  const dial = ClusterTransport.layerClientProtocol(secret)
  const transport = client
    ? Layer.provide(SocketRunner.layerClientOnly, dial)
    : Layer.provide(SocketRunner.layer, [ClusterTransport.layerSocketServer(secret), dial])
  const health = client ? RunnerHealth.layerNoop : RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(dial)
  )
  return transport.pipe(
    Layer.provide(health),
    Layer.provideMerge(SqlMessageStorage.layerWith({ prefix }).pipe(Layer.provide(NodeCrypto.layerDigest))),
    Layer.provide(Layer.orDie(SqlRunnerStorage.layerWith({ prefix }))),
    Layer.provide(shardingConfig(settings)),
    Layer.provide(RpcSerialization.layerSchemaBinary())
  )
}

/** `BankActors` and `ClusterNode` for the configured cluster mode. */
export const BankActorsLive = Layer.unwrap(Effect.gen(function*() {
  const config = yield* EngramConfig
  if (config.cluster.mode === "off") return Layer.merge(BankActors.layer, ClusterNode.off)
  // EngramConfig refuses to start a cluster node without a secret; this only guards a hand-built configuration.
  if (Option.isNone(config.cluster.secret)) return yield* Effect.die("a cluster node needs SERVICE_API_CLUSTER_SECRET")
  if (config.cluster.mode === "runner") {
    // Before it registers: a runner the others cannot reach must not take their shards.
    const address = advertisedAddress(config.cluster)
    yield* SecretFingerprint.checkAndRecord(
      clusterTablePrefix(config.databaseSchema),
      `${address.host}:${address.port}`,
      config.cluster.secret.value
    ).pipe(Effect.mapError((error) => error instanceof Error ? error : new Error(String(error))))
  }
  return ClusterBankActorsLayer.pipe(
    Layer.provide(sharding(config.cluster, config.cluster.secret.value, config.databaseSchema))
  )
}))
