/**
 * Every setting of the service, read once through Effect `Config` from `SERVICE_API_*` environment variables.
 * Secrets stay `Redacted` so they never reach a log line or a response. The configuration reference (docs/configuration.md)
 * lists the same variables; keep both in step.
 */
import { Config, Context, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import { type ResearchSettings, researchSettingsConfig } from "../research/ResearchSettings.ts"
import { type CodebaseSettings, codebaseSettingsConfig } from "../codebases/CodebaseSettings.ts"
import { type BrainSettings, brainSettingsConfig } from "../brain/BrainSettings.ts"
import { defaultJsonLimits, hardMaxDepth } from "../domain/JsonShape.ts"
import { type ClusterSettings, clusterSettingsConfig, clusterSettingsProblem } from "../cluster/ClusterSettings.ts"
import { parseTenantKeys, type TenantKey } from "../auth/TenantKeys.ts"
import { type McpToolFamily, parseToolFamilies } from "../mcp/McpToolFamilies.ts"

export class InvalidConfiguration extends Data.TaggedError("InvalidConfiguration")<{ readonly message: string }> {}

export interface EngramSettings {
  readonly host: string
  readonly port: number
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly databaseSchema: string
  readonly tenantExtension: "none" | "api_key"
  /** SERVICE_API_TENANT_API_KEY: one key that reaches every bank. */
  readonly tenantApiKey: Option.Option<Redacted.Redacted<string>>
  /** SERVICE_API_TENANT_API_KEYS: keys that each reach their own banks (`auth/TenantKeys`). */
  readonly tenantApiKeys: ReadonlyArray<TenantKey>
  readonly mcpEnabled: boolean
  readonly mcpDefaultBankId: string
  /** Host names the MCP endpoint answers for (DNS-rebinding guard); none set: loopback names on a loopback bind. */
  readonly mcpAllowedHosts: Option.Option<ReadonlyArray<string>>
  /** Browser origins the MCP endpoint accepts; none set: origins on an allowed host. */
  readonly mcpAllowedOrigins: Option.Option<ReadonlyArray<string>>
  /** The MCP tool families offered beyond the spec's 29 tools (SERVICE_API_MCP_TOOL_FAMILIES; none by default). */
  readonly mcpToolFamilies: ReadonlyArray<McpToolFamily>
  readonly fileParser: string
  readonly maxRequestBytes: number
  /**
   * How long the server keeps an idle kept-alive connection open (SERVICE_API_KEEP_ALIVE_TIMEOUT). Longer than the
   * idle timeouts of common client pools, so the client, not the server, closes an idle connection: a server closing
   * one as the client sends its next request on it is a reset the client sees as a failed request.
   */
  readonly keepAliveTimeout: Duration.Duration
  /** JSON bodies nested deeper are refused (400) before they are parsed (SERVICE_API_MAX_BODY_DEPTH). */
  readonly maxBodyDepth: number
  /** JSON bodies with more values and keys are refused (413) before they are parsed (SERVICE_API_MAX_BODY_ELEMENTS). */
  readonly maxBodyElements: number
  readonly actorIdleTimeout: Duration.Duration
  readonly operationMaxAttempts: number
  readonly operationRetryBase: Duration.Duration
  readonly circuitBreakerFailures: number
  readonly circuitBreakerOpenFor: Duration.Duration
  readonly defaultChunkSize: number
  /** Whether banks that do not say otherwise consolidate into observations after each retain. */
  readonly enableObservations: boolean
  /** Whether retain looks for contradictions and causal flaws and supersedes contradicted facts (SERVICE_API_ANOMALY_DETECTION). */
  readonly anomalyDetection: boolean
  /** Wall time of a reflect at budget `low` (mid ×2, high ×4); every model call in it ends by then. */
  readonly reflectTimeout: Duration.Duration
  /** Internet research: web search provider and page-fetch limits (SERVICE_API_WEB_SEARCH_*, SERVICE_API_RESEARCH_*). */
  readonly research: ResearchSettings
  /** Codebase import: git host API, archive caps, parse workers (SERVICE_API_GITHOST_*, SERVICE_API_CODEBASE_*). */
  readonly codebases: CodebaseSettings
  /**
   * Webhooks refuse private and loopback destinations (link-local and metadata ones always): SERVICE_API_WEBHOOK_
   * DENY_PRIVATE, or by default whenever the service listens on a non-loopback address.
   */
  readonly webhookDenyPrivate: boolean
  /**
   * Listening beyond loopback without an API key is refused at start unless this is set
   * (SERVICE_API_ALLOW_UNAUTHENTICATED): such a service would hand every bank to whoever reaches the port.
   */
  readonly allowUnauthenticated: boolean
  /** Brain runtime: routes, `.brain` files, hardware tier, prediction mode, breaker (SERVICE_API_BRAIN_*). */
  readonly brain: BrainSettings
  /** Scale-out over several processes sharing PostgreSQL (SERVICE_API_CLUSTER_*); `off` by default. */
  readonly cluster: ClusterSettings
  /**
   * Longest a slice of background work (an operation, a consolidation batch, a brain compaction) waits for a
   * moment without requests in flight before it runs anyway.
   */
  readonly backgroundMaxWait: Duration.Duration
}

const commaList = (value: string): ReadonlyArray<string> =>
  value.split(",").map((item) => item.trim()).filter((item) => item !== "")

/**
 * Longest the service's fibers run in one turn of the event loop before Node reads its sockets again (the
 * time-sliced scheduler; 0 keeps Effect's default, which runs every queued fiber's slice in one turn). Read by the
 * entry point alone, which provides the scheduler before any layer is built: not one of the settings.
 */
export const turnBudgetConfig = Config.Duration("SERVICE_API_TURN_BUDGET").pipe(
  Config.withDefault(Duration.millis(5))
)

const rawSettings = Config.all({
  host: Config.String("SERVICE_API_HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Port("SERVICE_API_PORT").pipe(Config.withDefault(8888)),
  dataDir: Config.String("SERVICE_API_DATA_DIR").pipe(Config.withDefault("./.engram")),
  databaseUrl: Config.option(Config.Redacted("SERVICE_API_DATABASE_URL")),
  databaseSchema: Config.String("SERVICE_API_DATABASE_SCHEMA").pipe(Config.withDefault("public")),
  tenantExtension: Config.Literals(["none", "api_key"], "SERVICE_API_TENANT_EXTENSION").pipe(
    Config.withDefault("none" as const)
  ),
  tenantApiKey: Config.option(Config.Redacted("SERVICE_API_TENANT_API_KEY")),
  mcpEnabled: Config.Boolean("SERVICE_API_MCP_ENABLED").pipe(Config.withDefault(true)),
  mcpDefaultBankId: Config.String("SERVICE_MCP_BANK_ID").pipe(Config.withDefault("default")),
  mcpAllowedHosts: Config.option(Config.String("SERVICE_API_MCP_ALLOWED_HOSTS").pipe(Config.map(commaList))),
  mcpAllowedOrigins: Config.option(Config.String("SERVICE_API_MCP_ALLOWED_ORIGINS").pipe(Config.map(commaList))),
  fileParser: Config.String("SERVICE_API_FILE_PARSER").pipe(Config.withDefault("native")),
  maxRequestBytes: Config.Int("SERVICE_API_MAX_REQUEST_BYTES").pipe(Config.withDefault(50 * 1024 * 1024)),
  keepAliveTimeout: Config.Duration("SERVICE_API_KEEP_ALIVE_TIMEOUT").pipe(Config.withDefault(Duration.seconds(95))),
  maxBodyDepth: Config.Int("SERVICE_API_MAX_BODY_DEPTH").pipe(Config.withDefault(defaultJsonLimits.maxDepth)),
  maxBodyElements: Config.Int("SERVICE_API_MAX_BODY_ELEMENTS").pipe(Config.withDefault(defaultJsonLimits.maxElements)),
  actorIdleTimeout: Config.Duration("SERVICE_API_ACTOR_IDLE_TIMEOUT").pipe(Config.withDefault(Duration.minutes(5))),
  operationMaxAttempts: Config.Int("SERVICE_API_OPERATION_MAX_ATTEMPTS").pipe(Config.withDefault(3)),
  operationRetryBase: Config.Duration("SERVICE_API_OPERATION_RETRY_BASE").pipe(
    Config.withDefault(Duration.millis(500))
  ),
  circuitBreakerFailures: Config.Int("SERVICE_API_CIRCUIT_BREAKER_FAILURES").pipe(Config.withDefault(5)),
  circuitBreakerOpenFor: Config.Duration("SERVICE_API_CIRCUIT_BREAKER_OPEN_FOR").pipe(
    Config.withDefault(Duration.seconds(30))
  ),
  defaultChunkSize: Config.Int("SERVICE_API_RETAIN_CHUNK_SIZE").pipe(Config.withDefault(512)),
  enableObservations: Config.Boolean("SERVICE_API_ENABLE_OBSERVATIONS").pipe(Config.withDefault(true)),
  anomalyDetection: Config.Boolean("SERVICE_API_ANOMALY_DETECTION").pipe(Config.withDefault(true)),
  reflectTimeout: Config.Duration("SERVICE_API_REFLECT_TIMEOUT").pipe(Config.withDefault(Duration.seconds(60))),
  research: researchSettingsConfig,
  codebases: codebaseSettingsConfig,
  brain: brainSettingsConfig,
  cluster: clusterSettingsConfig,
  webhookDenyPrivate: Config.option(Config.Boolean("SERVICE_API_WEBHOOK_DENY_PRIVATE")),
  allowUnauthenticated: Config.Boolean("SERVICE_API_ALLOW_UNAUTHENTICATED").pipe(Config.withDefault(false)),
  backgroundMaxWait: Config.Duration("SERVICE_API_BACKGROUND_MAX_WAIT").pipe(Config.withDefault(Duration.millis(500)))
})

/** Loopback addresses and names a service can listen on. */
export const isLoopbackHost = (host: string): boolean =>
  /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host.trim())

const settings = rawSettings.pipe(Config.map((raw): EngramSettings => ({
  ...raw,
  // Read by the layer, which can refuse a malformed value with a message (see `withTenantKeys`).
  tenantApiKeys: [],
  // Read by the layer, which can refuse an unknown family with the list of known ones (see `withToolFamilies`).
  mcpToolFamilies: [],
  // Local development on 127.0.0.1 keeps reaching local receivers; a service others can reach refuses them.
  webhookDenyPrivate: Option.getOrElse(raw.webhookDenyPrivate, () => !isLoopbackHost(raw.host))
})))

/** The settings with the keys of SERVICE_API_TENANT_API_KEYS, or a start-up error saying what is wrong with it. */
const withTenantKeys = (value: EngramSettings) =>
  Effect.gen(function*() {
    const raw = yield* Config.option(Config.Redacted("SERVICE_API_TENANT_API_KEYS"))
    if (Option.isNone(raw) || Redacted.value(raw.value).trim() === "") return value
    const keys = parseTenantKeys(raw.value)
    if (typeof keys === "string") return yield* new InvalidConfiguration({ message: keys })
    return { ...value, tenantApiKeys: keys }
  })

/** The settings with the families of SERVICE_API_MCP_TOOL_FAMILIES, or a start-up error naming an unknown one. */
const withToolFamilies = (value: EngramSettings) =>
  Effect.gen(function*() {
    const raw = yield* Config.String("SERVICE_API_MCP_TOOL_FAMILIES").pipe(Config.withDefault(""))
    const families = parseToolFamilies(raw)
    if (typeof families === "string") return yield* new InvalidConfiguration({ message: families })
    return { ...value, mcpToolFamilies: families }
  })

export class EngramConfig extends Context.Service<EngramConfig, EngramSettings>()("engram/config/EngramConfig") {
  /** Reads the environment; an inconsistent combination is a start-up error that says what to set. */
  static readonly layer = Layer.effect(
    EngramConfig,
    Effect.gen(function*() {
      const value = yield* withToolFamilies(yield* withTenantKeys(yield* settings))
      if (
        value.tenantExtension === "api_key" && Option.isNone(value.tenantApiKey) && value.tenantApiKeys.length === 0
      ) {
        return yield* new InvalidConfiguration({
          message:
            "SERVICE_API_TENANT_EXTENSION=api_key requires SERVICE_API_TENANT_API_KEY or SERVICE_API_TENANT_API_KEYS to be set"
        })
      }
      if (!isLoopbackHost(value.host) && value.tenantExtension !== "api_key" && !value.allowUnauthenticated) {
        return yield* new InvalidConfiguration({
          message: `SERVICE_API_HOST=${value.host} listens beyond this machine with no API key: set ` +
            "SERVICE_API_TENANT_EXTENSION=api_key and SERVICE_API_TENANT_API_KEY, or SERVICE_API_ALLOW_UNAUTHENTICATED=true " +
            "if something in front of the service authenticates its clients"
        })
      }
      if (value.maxBodyDepth < 1 || value.maxBodyDepth > hardMaxDepth || value.maxBodyElements < 1) {
        return yield* new InvalidConfiguration({
          message:
            `SERVICE_API_MAX_BODY_DEPTH must be between 1 and ${hardMaxDepth}, and SERVICE_API_MAX_BODY_ELEMENTS at least 1`
        })
      }
      const clusterProblem = clusterSettingsProblem(
        value.cluster,
        Option.filter(value.databaseUrl, (url) => Redacted.value(url).trim() !== "")
      )
      if (clusterProblem !== undefined) return yield* new InvalidConfiguration({ message: clusterProblem })
      return EngramConfig.of(value)
    })
  )

  /** The defaults with some settings replaced: for tests and for embedding the service in-process. */
  static readonly layerWith = (overrides: Partial<EngramSettings>) =>
    Layer.effect(EngramConfig, Effect.map(settings, (value) => EngramConfig.of({ ...value, ...overrides })))
}
