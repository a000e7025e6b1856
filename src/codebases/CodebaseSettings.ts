/**
 * Codebase import settings (`SERVICE_API_GITHOST_*`, `SERVICE_API_CODEBASE_*`): where the git host's API answers,
 * whether it may be on a private network, the caps a zip archive must stay within, how many threads parse, and
 * whether the MCP endpoint offers the codebase tools.
 */
import { Config, Duration } from "effect"
import type { ArchiveLimits } from "../archives/ZipReader.ts"

export interface CodebaseSettings {
  /** The git host API base (GitHub's shape: `/repos/{owner}/{repo}`, `/commits/{ref}`, `/zipball/{sha}`). */
  readonly githostApiUrl: string
  /** Loopback and private git hosts are refused unless this is set (a request must not reach the internal network). */
  readonly githostAllowPrivateNetworks: boolean
  readonly githostTimeout: Duration.Duration
  /** Bytes of one archive (upload or git host download). */
  readonly maxArchiveBytes: number
  readonly archive: ArchiveLimits
  /** Parse worker threads; unset: one less than the CPUs (1 to 4); 0 parses in-process. */
  readonly parseWorkers: number | undefined
  /** Offer the codebase tools on the MCP endpoint (off: the endpoint lists the spec's tools and the knowledge-base tools). */
  readonly mcpTools: boolean
}

export const defaultCodebaseSettings: CodebaseSettings = {
  githostApiUrl: "https://api.github.com",
  githostAllowPrivateNetworks: false,
  githostTimeout: Duration.seconds(60),
  maxArchiveBytes: 100 * 1024 * 1024,
  // A source tree inflates about 3 times (this repository: 2.8); 20 leaves room for generated and vendored text,
  // and a 0.5 MB archive of zeros can no longer make the server inflate 512 MiB (it stops at the 64 MiB floor, or
  // at the first entry past the 100× ratio).
  archive: {
    maxFiles: 20_000,
    maxFileBytes: 5 * 1024 * 1024,
    maxTotalBytes: 512 * 1024 * 1024,
    maxRatio: 100,
    maxInflation: 20,
    inflationFloorBytes: 64 * 1024 * 1024
  },
  parseWorkers: undefined,
  mcpTools: false
}

const defaults = defaultCodebaseSettings
export const codebaseSettingsConfig: Config.Config<CodebaseSettings> = Config.all({
  githostApiUrl: Config.String("SERVICE_API_GITHOST_API_URL").pipe(Config.withDefault(defaults.githostApiUrl)),
  githostAllowPrivateNetworks: Config.Boolean("SERVICE_API_GITHOST_ALLOW_PRIVATE_NETWORKS").pipe(
    Config.withDefault(false)
  ),
  githostTimeout: Config.Duration("SERVICE_API_GITHOST_TIMEOUT").pipe(Config.withDefault(defaults.githostTimeout)),
  maxArchiveBytes: Config.Int("SERVICE_API_CODEBASE_MAX_ARCHIVE_BYTES").pipe(
    Config.withDefault(defaults.maxArchiveBytes)
  ),
  archive: Config.all({
    maxFiles: Config.Int("SERVICE_API_CODEBASE_MAX_FILES").pipe(Config.withDefault(defaults.archive.maxFiles)),
    maxFileBytes: Config.Int("SERVICE_API_CODEBASE_MAX_FILE_BYTES").pipe(
      Config.withDefault(defaults.archive.maxFileBytes)
    ),
    maxTotalBytes: Config.Int("SERVICE_API_CODEBASE_MAX_TOTAL_BYTES").pipe(
      Config.withDefault(defaults.archive.maxTotalBytes)
    ),
    maxRatio: Config.Number("SERVICE_API_CODEBASE_MAX_RATIO").pipe(Config.withDefault(defaults.archive.maxRatio)),
    maxInflation: Config.Number("SERVICE_API_CODEBASE_MAX_INFLATION").pipe(
      Config.withDefault(defaults.archive.maxInflation)
    ),
    inflationFloorBytes: Config.Int("SERVICE_API_CODEBASE_INFLATION_FLOOR_BYTES").pipe(
      Config.withDefault(defaults.archive.inflationFloorBytes)
    )
  }),
  parseWorkers: Config.Int("SERVICE_API_CODEBASE_PARSE_WORKERS").pipe(
    Config.option,
    Config.map((value) => value._tag === "Some" ? value.value : undefined)
  ),
  mcpTools: Config.Boolean("SERVICE_API_CODEBASE_MCP_TOOLS").pipe(Config.withDefault(defaults.mcpTools))
})
