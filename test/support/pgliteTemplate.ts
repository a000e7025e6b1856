/**
 * Builds the run's PGlite template: a data dir with initdb done and every migration applied, which each test server
 * on the PGlite tier starts from a copy of (`freshDatabaseSettings`). A new data dir costs about 3.5 CPU seconds
 * (initdb and 38 migrations), a migrated one about 0.8 (`node bench/pglite-tiering.ts`), and a run starts a few
 * hundred servers. Run by `test/globalSetup.ts` as `node test/support/pgliteTemplate.ts <dataDir>` in a process of
 * its own, so the test runner's process never loads PGlite.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { Effect, Layer } from "effect"
import * as SqlLive from "../../layers/storage/SqlLive.ts"
import { migrations } from "../../src/storage/migrations/index.ts"

const dataDir = process.argv[2]
if (dataDir === undefined) throw new Error("usage: node test/support/pgliteTemplate.ts <dataDir>")

// The schema and migrations table a test server's default configuration uses (SERVICE_API_DATABASE_SCHEMA=public).
const migrated = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations), table: "public.engram_migrations" })
  .pipe(
    Layer.provide(SqlLive.pglite({ dataDir, thread: "main" })),
    Layer.provide(NodeServices.layer)
  )

await Effect.runPromise(Layer.build(migrated).pipe(Effect.scoped))
