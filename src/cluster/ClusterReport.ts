/** The cluster's part of `/health` and `/metrics`; nothing at all on a single process, so its output is unchanged. */
import { Effect, Metric } from "effect"
import type { ClusterNode } from "./ClusterNode.ts"

const shardsGauge = Metric.gauge("engram_cluster_shards_owned", { description: "Shards whose lock this node holds" })
const inFlightGauge = Metric.gauge("engram_cluster_messages_in_flight", {
  description: "Messages this node sent to bank entities and has not seen through yet"
})
const entitiesGauge = Metric.gauge("engram_cluster_entities", { description: "Bank entities alive on this node" })

export const clusterHealth = (node: ClusterNode["Service"]) =>
  node.role === "off"
    ? Effect.succeed({})
    : Effect.map(
      node.shardsOwned,
      (shards) => ({ cluster: { role: node.role as "runner" | "client", shards_owned: shards } })
    )

export const updateClusterGauges = (node: ClusterNode["Service"]) =>
  node.role === "off" ? Effect.void : Effect.gen(function*() {
    const role = { role: node.role }
    yield* Metric.update(Metric.withAttributes(shardsGauge, role), yield* node.shardsOwned)
    yield* Metric.update(Metric.withAttributes(inFlightGauge, role), yield* node.messagesInFlight)
    yield* Metric.update(Metric.withAttributes(entitiesGauge, role), yield* node.entityCount)
  })
