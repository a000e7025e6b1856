/**
 * Brain runtime settings (`SERVICE_API_BRAIN_*`): whether the brain routes are served, where `.brain` files live
 * and how large they may be, the hardware tier that bounds what a file carries, the activity prediction mode, the
 * start-up warm-up, the brain's circuit breaker and whether learning may reach private networks.
 */
import { Config, Duration, Option } from "effect"

export const hardwareTiers = ["low", "balanced", "high"] as const
export type HardwareTier = typeof hardwareTiers[number]

export const predictionModes = ["histogram", "kalman_lite", "hmm_lite"] as const
export type PredictionMode = typeof predictionModes[number]

export interface BrainSettings {
  /** Brain routes (status, export, import, learn, influence, sub-routine) are served (SERVICE_API_BRAIN_ENABLED). */
  readonly enabled: boolean
  /** Export, import and validate are served (SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED). */
  readonly importExportEnabled: boolean
  /** Where `.brain` files are written; none set: `<data dir>/brain`. */
  readonly cacheDir: Option.Option<string>
  /** A `.brain` file larger than this is neither written nor accepted. */
  readonly maxFileBytes: number
  /**
   * Banks of at least `keepFilesMinMemories` memories keep their brain in their `.brain` file (written after a build,
   * in a lull, and when the service stops), and a cold read loads it instead of building from the tables.
   */
  readonly keepFiles: boolean
  readonly keepFilesMinMemories: number
  readonly hardwareTier: HardwareTier
  readonly predictionMode: PredictionMode
  /** Queue a warm-up sub-routine for every bank when the service starts. */
  readonly startupWarmup: boolean
  /** Consecutive failed brain builds of a bank that open its breaker. */
  readonly breakerFailures: number
  /** How long an open breaker keeps the bank on SQL before one build is tried again (half-open). */
  readonly breakerCoolDown: Duration.Duration
  /** `brain/learn` may reach loopback and private addresses (tests, a private cluster). */
  readonly learnAllowPrivateNetworks: boolean
  /**
   * A bank whose brain would hold more bytes than this keeps none: its recalls read SQL
   * (SERVICE_API_BRAIN_MAX_BYTES; the default holds a bank of several hundred thousand memories).
   */
  readonly maxBytes: number
  /**
   * Big banks' HNSW indexes are built on a worker thread (SERVICE_API_BRAIN_INDEX_WORKER); false builds them on the
   * event loop in small slices, as happens anyway when the worker cannot run.
   */
  readonly indexWorker: boolean
}

/** What a `.brain` file carries at most, by hardware tier. */
export const tierBudgets: Record<HardwareTier, { readonly mentalModels: number; readonly memories: number }> = {
  low: { mentalModels: 100, memories: 1_000 },
  balanced: { mentalModels: 200, memories: 5_000 },
  high: { mentalModels: 400, memories: 20_000 }
}

export const defaultBrainSettings: BrainSettings = {
  enabled: true,
  importExportEnabled: true,
  cacheDir: Option.none(),
  maxFileBytes: 512 * 1024 * 1024,
  keepFiles: true,
  keepFilesMinMemories: 1_000,
  hardwareTier: "balanced",
  predictionMode: "histogram",
  startupWarmup: false,
  breakerFailures: 3,
  breakerCoolDown: Duration.seconds(30),
  learnAllowPrivateNetworks: false,
  maxBytes: 1024 * 1024 * 1024,
  indexWorker: true
}

export const brainSettingsConfig: Config.Config<BrainSettings> = Config.all({
  enabled: Config.Boolean("SERVICE_API_BRAIN_ENABLED").pipe(Config.withDefault(defaultBrainSettings.enabled)),
  importExportEnabled: Config.Boolean("SERVICE_API_BRAIN_IMPORT_EXPORT_ENABLED").pipe(
    Config.withDefault(defaultBrainSettings.importExportEnabled)
  ),
  cacheDir: Config.option(Config.String("SERVICE_API_BRAIN_CACHE_DIR")).pipe(
    Config.map(Option.filter((value: string) => value.trim() !== ""))
  ),
  maxFileBytes: Config.Int("SERVICE_API_BRAIN_MAX_FILE_BYTES").pipe(
    Config.withDefault(defaultBrainSettings.maxFileBytes)
  ),
  keepFiles: Config.Boolean("SERVICE_API_BRAIN_KEEP_FILES").pipe(Config.withDefault(defaultBrainSettings.keepFiles)),
  keepFilesMinMemories: Config.Int("SERVICE_API_BRAIN_KEEP_FILES_MIN_MEMORIES").pipe(
    Config.withDefault(defaultBrainSettings.keepFilesMinMemories)
  ),
  hardwareTier: Config.Literals(hardwareTiers, "SERVICE_API_BRAIN_HARDWARE_TIER").pipe(
    Config.withDefault(defaultBrainSettings.hardwareTier)
  ),
  predictionMode: Config.Literals(predictionModes, "SERVICE_API_BRAIN_PREDICTION_MODE").pipe(
    Config.withDefault(defaultBrainSettings.predictionMode)
  ),
  startupWarmup: Config.Boolean("SERVICE_API_BRAIN_STARTUP_WARMUP").pipe(
    Config.withDefault(defaultBrainSettings.startupWarmup)
  ),
  breakerFailures: Config.Int("SERVICE_API_BRAIN_CIRCUIT_BREAKER_FAILURES").pipe(
    Config.withDefault(defaultBrainSettings.breakerFailures)
  ),
  breakerCoolDown: Config.Duration("SERVICE_API_BRAIN_CIRCUIT_BREAKER_COOL_DOWN").pipe(
    Config.withDefault(defaultBrainSettings.breakerCoolDown)
  ),
  learnAllowPrivateNetworks: Config.Boolean("SERVICE_API_BRAIN_LEARN_ALLOW_PRIVATE_NETWORKS").pipe(
    Config.withDefault(defaultBrainSettings.learnAllowPrivateNetworks)
  ),
  maxBytes: Config.Int("SERVICE_API_BRAIN_MAX_BYTES").pipe(Config.withDefault(defaultBrainSettings.maxBytes)),
  indexWorker: Config.Boolean("SERVICE_API_BRAIN_INDEX_WORKER").pipe(
    Config.withDefault(defaultBrainSettings.indexWorker)
  )
})
