/**
 * The run's migrated PGlite template (`test/globalSetup.ts` builds it) and fresh copies of it. Apart from
 * `TestDatabase.ts`, and naming no tier, so that a test that opens PGlite itself can take a copy and still run on
 * the PGlite tier only (`test/tierIndependent.ts`).
 */
import { cpSync } from "node:fs"
import { join } from "node:path"
import { freshDataDir } from "./DataDirs.ts"

/** The run's migrated PGlite data dir, copied into each new one; unset, a server migrates its own. */
export const pgliteTemplate = process.env["ENGRAM_TEST_PGLITE_TEMPLATE"]

/**
 * A new PGlite data dir for a test that opens PGlite itself, whatever the tier: a copy of the run's migrated template
 * (no initdb, and every migration already applied in `public`), or, without a template, a path PGlite creates.
 */
export const freshPgliteDataDir = (): string => {
  const dataDir = join(freshDataDir(), "pglite")
  if (pgliteTemplate !== undefined) cpSync(pgliteTemplate, dataDir, { recursive: true })
  return dataDir
}
