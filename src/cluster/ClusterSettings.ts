/**
 * Scale-out settings (`SERVICE_API_CLUSTER_*`). `off` (the default) is the single process of old. `runner` hosts
 * bank entities for the shards it owns and serves HTTP; `client` serves HTTP only and routes bank work to the
 * runners. Both share one PostgreSQL, where `effect/cluster` keeps runners, shard locks and persisted messages.
 */
import { Config, Duration, Option, Redacted } from "effect"
import { ShardingConfig } from "effect/cluster"

export const clusterModes = ["off", "runner", "client"] as const
export type ClusterMode = typeof clusterModes[number]

export interface ClusterSettings {
  readonly mode: ClusterMode
  /** Interface the runner's socket listens on (SERVICE_API_CLUSTER_LISTEN_HOST). */
  readonly listenHost: string
  /** Port of the runner-to-runner socket (SERVICE_API_CLUSTER_PORT). */
  readonly port: number
  /** Host other nodes dial to reach this runner; none set: the listen host (SERVICE_API_CLUSTER_ADVERTISED_HOST). */
  readonly advertisedHost: Option.Option<string>
  /** Shards banks are hashed over; every node of a cluster must agree (SERVICE_API_CLUSTER_SHARDS). */
  readonly shards: number
  /** How often a runner pings the others (SERVICE_API_CLUSTER_HEALTH_CHECK_INTERVAL). */
  readonly healthCheckInterval: Duration.Duration
  /**
   * How long a runner's shard locks last without a refresh (SERVICE_API_CLUSTER_SHARD_LOCK_EXPIRATION; effect/cluster's
   * default): a SIGKILLed runner's singletons moved 28–30 s after the kill with 35 s, 5–11 s with 10 s. A runner stalled
   * longer than this loses its shards while it still runs their entities.
   */
  readonly shardLockExpiration: Duration.Duration
  /**
   * Keys the TLS between nodes (SERVICE_API_CLUSTER_SECRET); the same on every node. Required in `runner` and
   * `client` modes: without it whoever reaches the cluster port could read and write every bank.
   */
  readonly secret: Option.Option<Redacted.Redacted<string>>
}

/** Shorter shard lock expirations are refused at start-up: a runner would refresh its locks every second or faster. */
const minimumShardLockExpirationSeconds = 3

/** Shorter secrets are refused at start-up: the secret is the only thing between the cluster port and every bank. */
export const minimumClusterSecretLength = 16

export const defaultClusterSettings: ClusterSettings = {
  mode: "off",
  listenHost: "127.0.0.1",
  port: 34431,
  advertisedHost: Option.none(),
  shards: 300,
  healthCheckInterval: Duration.seconds(5),
  shardLockExpiration: Duration.fromInputUnsafe(ShardingConfig.defaults.shardLockExpiration),
  secret: Option.none()
}

export const clusterSettingsConfig: Config.Config<ClusterSettings> = Config.all({
  mode: Config.Literals(clusterModes, "SERVICE_API_CLUSTER_MODE").pipe(Config.withDefault(defaultClusterSettings.mode)),
  listenHost: Config.String("SERVICE_API_CLUSTER_LISTEN_HOST").pipe(
    Config.withDefault(defaultClusterSettings.listenHost)
  ),
  port: Config.Port("SERVICE_API_CLUSTER_PORT").pipe(Config.withDefault(defaultClusterSettings.port)),
  advertisedHost: Config.option(Config.String("SERVICE_API_CLUSTER_ADVERTISED_HOST")),
  shards: Config.Int("SERVICE_API_CLUSTER_SHARDS").pipe(Config.withDefault(defaultClusterSettings.shards)),
  healthCheckInterval: Config.Duration("SERVICE_API_CLUSTER_HEALTH_CHECK_INTERVAL").pipe(
    Config.withDefault(defaultClusterSettings.healthCheckInterval)
  ),
  shardLockExpiration: Config.Duration("SERVICE_API_CLUSTER_SHARD_LOCK_EXPIRATION").pipe(
    Config.withDefault(defaultClusterSettings.shardLockExpiration)
  ),
  secret: Config.option(Config.Redacted("SERVICE_API_CLUSTER_SECRET"))
})

/** A start-up error message when the settings cannot work, or none. */
export const clusterSettingsProblem = (
  settings: ClusterSettings,
  databaseUrl: Option.Option<unknown>
): string | undefined => {
  if (settings.mode === "off") return undefined
  if (Option.isNone(databaseUrl)) {
    return `SERVICE_API_CLUSTER_MODE=${settings.mode} requires SERVICE_API_DATABASE_URL (a PostgreSQL shared by every node); ` +
      "the embedded database serves one process only"
  }
  if (settings.shards < 1) return "SERVICE_API_CLUSTER_SHARDS must be at least 1"
  // A runner refreshes its locks every third of the expiration, and its lock session times out after it.
  if (Duration.toSeconds(settings.shardLockExpiration) < minimumShardLockExpirationSeconds) {
    return `SERVICE_API_CLUSTER_SHARD_LOCK_EXPIRATION must be at least ${minimumShardLockExpirationSeconds} seconds`
  }
  // The message names the variable and the rule, never the value (nor its length).
  if (Option.isNone(settings.secret)) {
    return `SERVICE_API_CLUSTER_MODE=${settings.mode} requires SERVICE_API_CLUSTER_SECRET: the same secret of at least ` +
      `${minimumClusterSecretLength} characters on every node, which authenticates the traffic between them`
  }
  if (Redacted.value(settings.secret.value).length < minimumClusterSecretLength) {
    return `SERVICE_API_CLUSTER_SECRET must be at least ${minimumClusterSecretLength} characters`
  }
  return undefined
}
