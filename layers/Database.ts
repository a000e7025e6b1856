/**
 * The database the configuration asks for, with every migration applied: PostgreSQL when
 * `SERVICE_API_DATABASE_URL` is set (and never a silent fall-back), otherwise embedded PGlite in the data dir.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as PgMigrator from "@effect/sql-pg/PgMigrator"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Path from "node:path"
import { EngramConfig } from "../src/config/EngramConfig.ts"
import { migrations } from "../src/storage/migrations/index.ts"
import * as SqlLive from "./storage/SqlLive.ts"

const connection = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* EngramConfig
    const url = Option.filter(config.databaseUrl, (value) => Redacted.value(value).trim() !== "")
    return Option.isSome(url)
      ? SqlLive.postgres({ url: url.value, schema: config.databaseSchema })
      : SqlLive.pglite({ dataDir: Path.join(config.dataDir, "pglite"), schema: config.databaseSchema })
  })
)

/**
 * The migrations table is named with the tenant's schema. Unqualified, the migrator's existence check follows the
 * `search_path` (`tenant, public`): a tenant started in a database whose `public` schema already held an engram
 * found that one's table, counted every migration as applied, created nothing in its own schema, and then read
 * and wrote the `public` tenant's tables through the same `search_path`.
 */
const migrated = Layer.unwrap(
  Effect.map(
    EngramConfig,
    (config) =>
      PgMigrator.layer({
        loader: PgMigrator.fromRecord(migrations),
        table: `${config.databaseSchema}.engram_migrations`
      })
  )
).pipe(Layer.provide(NodeServices.layer))

export const DatabaseLive = Layer.provideMerge(migrated, connection)
