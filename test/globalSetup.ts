/**
 * One test run's scratch space, removed when the run ends.
 *
 * Every test makes temporary data directories (a PGlite database is 20–140 MB) and PostgreSQL schemas. Removing
 * each one in its own test is easy to forget and never happens for a service a test SIGKILLs, and 2,000 leaked
 * directories once filled the disk of the machine CI shares. So the run points TMPDIR at a directory of its own
 * (workers and the services they start inherit it, and `os.tmpdir()` follows it) and names its schemas with a run
 * tag (`test/support/TestRun.ts`); the teardown deletes both, whatever the tests did. Data dirs go to a directory of
 * the run in memory when there is room (`test/support/DataDirs.ts`), each removed as its test file ends.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { mkdtempSync, statfsSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * Schemas dropped at once. A run leaves a few hundred (one per test server on the PostgreSQL tier), each of some
 * 190 relations, and the server spends a drop mostly waiting, not computing: 12 schemas took 12.8 s one at a time
 * and 2.4 s six at a time (load ~8 on 2 cores). One at a time, the teardown held CI for about 70 s after the last test.
 */
const dropConcurrency = 6

const dropRunSchemas = (url: string, tag: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const schemas = yield* sql<{ name: string }>`
      SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, ${`t_${tag}_`})`
    yield* Effect.forEach(schemas, ({ name }) => sql`DROP SCHEMA ${sql(name)} CASCADE`, {
      concurrency: dropConcurrency,
      discard: true
    })
    return schemas.length
  }).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: dropConcurrency })),
    Effect.scoped
  )

/**
 * A directory in memory for the run's data dirs (`test/support/DataDirs.ts`), when /dev/shm is a file system with
 * room for them (4 GiB free; each test file's are removed when it ends, a few at a time exist); else undefined and
 * they go to the run's directory on disk. `ENGRAM_TEST_DATA_IN_MEMORY=false` keeps them on disk.
 */
const dataDirsInMemory = (tag: string): string | undefined => {
  if (process.env["ENGRAM_TEST_DATA_IN_MEMORY"] === "false") return undefined
  try {
    const space = statfsSync("/dev/shm")
    if (space.bavail * space.bsize < 4 * 1024 ** 3) return undefined
    return mkdtempSync(join("/dev/shm", `engram-run-${tag}-`))
  } catch {
    return undefined
  }
}

export default function setup() {
  // The pglite and postgres projects both run this; the first one to start owns the run's space.
  if (process.env["ENGRAM_TEST_RUN"] !== undefined) return
  const tag = crypto.randomUUID().replaceAll("-", "").slice(0, 8)
  const dir = mkdtempSync(join(tmpdir(), `engram-run-${tag}-`))
  process.env["ENGRAM_TEST_RUN"] = tag
  process.env["TMPDIR"] = dir
  const inMemory = dataDirsInMemory(tag)
  if (inMemory !== undefined) process.env["ENGRAM_TEST_DATA_DIRS"] = inMemory
  // Every test server on the PGlite tier starts from a copy of one migrated data dir (test/support/pgliteTemplate.ts):
  // initdb and the migrations once per run instead of once per server. If it cannot be built, each server migrates.
  const template = join(dir, "pglite-template")
  try {
    execFileSync(process.execPath, ["test/support/pgliteTemplate.ts", template], { stdio: "inherit" })
    process.env["ENGRAM_TEST_PGLITE_TEMPLATE"] = template
  } catch (error) {
    console.warn(`no PGlite template for this run (each test server migrates its own): ${String(error)}`)
  }
  // The files and the schemas go at the same time: one is the disk, the other the database server.
  return async () => {
    const url = process.env["ENGRAM_TEST_DATABASE_URL"]
    const [, , dropped] = await Promise.all([
      rm(dir, { recursive: true, force: true, maxRetries: 3 }),
      inMemory === undefined ? undefined : rm(inMemory, { recursive: true, force: true, maxRetries: 3 }),
      url === undefined ? 0 : Effect.runPromise(dropRunSchemas(url, tag).pipe(Effect.orElseSucceed(() => -1)))
    ])
    if (dropped < 0) console.warn(`could not drop this run's schemas (t_${tag}_*) on PostgreSQL`)
  }
}
