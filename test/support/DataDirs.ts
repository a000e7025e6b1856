/**
 * Where a test's data directories go (a PGlite database, brain files: 20–140 MB each), and their removal when the
 * test file that made them ends.
 *
 * On this kind of machine the disk is slow at what a PGlite data dir is made of: a copy of the migrated template
 * (1,280 files, 42 MB) took 1.2 s of system CPU with `cp -a` into the disk's /tmp and 0.1 s into /dev/shm, and the
 * PGlite-tier tests of `test/memory` ran in 103 s instead of 119 s (two alternating pairs). So the run's global setup makes a
 * directory in memory (`test/globalSetup.ts`, when /dev/shm has room; `ENGRAM_TEST_DATA_IN_MEMORY=false` keeps it on
 * disk) and every data dir is made there. Memory is not a disk a whole run can fill (a run made a few hundred), so
 * each test file's are removed when it ends (`test/support/removeDataDirs.ts`, a setup file); the run's teardown
 * removes whatever is left. A SIGKILL leaves what a process wrote in the files either way: the crash tests test
 * the same thing on either.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Set by the run's global setup when data dirs go to memory; else the run's TMPDIR on disk. */
const root = (): string => process.env["ENGRAM_TEST_DATA_DIRS"] ?? tmpdir()

const made: Array<string> = []

/** A new empty directory for a test's data, removed when the test file ends. */
export const freshDataDir = (prefix = "engram-test-"): string => {
  const dir = mkdtempSync(join(root(), prefix))
  made.push(dir)
  return dir
}

/** Removes the data dirs made since the last call (by the test file that just ended). */
export const removeDataDirs = (): void => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
}
