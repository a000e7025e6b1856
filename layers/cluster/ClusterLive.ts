/**
 * The bank actors as configured: in-process (SERVICE_API_CLUSTER_MODE=off, the default, exactly as before), or
 * routed through `effect/cluster` — socket transport between runners, runner registry, shard locks and message
 * storage in the shared PostgreSQL (SqlRunnerStorage, SqlMessageStorage).
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Effect, Layer, Option } from "effect"
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

const shardingConfig = (settings: ClusterSettings) => {
  const listen = RunnerAddress.make(settings.listenHost, settings.port)
  const advertised = RunnerAddress.make(Option.getOrElse(settings.advertisedHost, () => settings.listenHost), settings.port)
  const runner = settings.mode === "runner"
  return ShardingConfig.layer({
    runnerAddress: runner ? Option.some(advertised) : Option.none(),
    runnerListenAddress: runner ? Option.some(listen) : Option.none(),
    shardsPerGroup: settings.shards,
    runnerHealthCheckInterval: settings.healthCheckInterval,
    // A graceful stop hands shards over at once; a SIGKILLed runner's advisory locks go with its sessions.
    preemptiveShutdown: true
  })
}

const sharding = (settings: ClusterSettings, schema: string) => {
  const prefix = clusterTablePrefix(schema)
  const client = settings.mode === "client"
  const transport = client
    ? Layer.provide(SocketRunner.layerClientOnly, NodeClusterSocket.layerClientProtocol)
    : Layer.provide(SocketRunner.layer, [NodeClusterSocket.layerSocketServer, NodeClusterSocket.layerClientProtocol])
  const health = client ? RunnerHealth.layerNoop : RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol)
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
  return ClusterBankActorsLayer.pipe(Layer.provide(sharding(config.cluster, config.databaseSchema)))
}))
