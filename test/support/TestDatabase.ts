/**
 * The fresh database a test server or a child service starts on, for the tier this test run was started for: a new
 * PGlite data dir (a copy of the run's migrated template) or a new PostgreSQL schema. Kept apart from
 * `TestServer.ts`, which loads the whole application: the process and cluster tests start engram as child processes
 * and need only this, so their test process does not import the app's module graph.
 */
import { Option, Redacted } from "effect"
import { cpSync } from "node:fs"
import { join } from "node:path"
import type { EngramSettings } from "../../src/config/EngramConfig.ts"
import { freshDataDir } from "./DataDirs.ts"
import { pgliteTemplate } from "./PgliteCopy.ts"
import { freshSchemaName } from "./TestRun.ts"

/** `pglite`, or the PostgreSQL URL of the tier (set by vitest.config.ts). */
export const databaseTier = process.env["ENGRAM_TEST_DATABASE"] ?? "pglite"

/**
 * Every tier this run was started with: PGlite, and PostgreSQL when the run has its URL. For a test that measures
 * servers of both side by side in one file (the idle test), where running the file once per tier would only wait twice.
 */
export const runTiers = (): Array<string> => {
  const url = process.env["ENGRAM_TEST_DATABASE_URL"]
  return url === undefined || url === "" ? ["pglite"] : ["pglite", url]
}

export const freshDatabaseSettings = (tier: string = databaseTier): Partial<EngramSettings> => {
  const dataDir = freshDataDir()
  if (tier === "pglite") {
    if (pgliteTemplate !== undefined) cpSync(pgliteTemplate, join(dataDir, "pglite"), { recursive: true })
    return { dataDir, databaseUrl: Option.none() }
  }
  const schema = freshSchemaName()
  return { dataDir, databaseUrl: Option.some(Redacted.make(tier)), databaseSchema: schema }
}

/** The same fresh database as environment variables, for a service started as a separate process. */
export const freshServiceEnv = (
  extra: Record<string, string> = {},
  tier: string = databaseTier
): Record<string, string> => {
  const settings = freshDatabaseSettings(tier)
  const env: Record<string, string> = { SERVICE_API_DATA_DIR: settings.dataDir!, ...extra }
  if (settings.databaseUrl && Option.isSome(settings.databaseUrl)) {
    env["SERVICE_API_DATABASE_URL"] = Redacted.value(settings.databaseUrl.value)
    env["SERVICE_API_DATABASE_SCHEMA"] = settings.databaseSchema!
  }
  return env
}
