/**
 * The SQL layers: `SqlClient` and `PgClient` over embedded PGlite (the default) or a PostgreSQL server, both through
 * `@effect/sql-pg`, with the tenant schema created and on the `search_path`, pgvector installed and its codec
 * registered, and snake_case columns read as camelCase fields. It must never fall back from PostgreSQL to PGlite.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Str from "effect/String"
import * as Path from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { registerCopyLoader } from "../../src/storage/EmbeddedCopy.ts"
import { markSessionHolders } from "../../src/storage/SessionHolder.ts"
import { openPglite } from "./PgliteOpen.ts"
import * as PgliteStream from "./PgliteStream.ts"
import { lockDataDir } from "./DataDirLock.ts"
import * as PgliteWorker from "./PgliteWorker.ts"
import * as Float4 from "./Float4.ts"
import * as PgVector from "./PgVector.ts"
import { describeErrorChain } from "./ErrorChain.ts"

/** What every variant provides. */
export type Sql = PgClient.PgClient | SqlClient.SqlClient

/** The database could not be opened, reached or prepared. The message is safe to log: it never holds a password. */
export class DatabaseStartupError extends Schema.TaggedError<DatabaseStartupError>()("DatabaseStartupError", {
  message: Schema.String
}) {}

/** Where PGlite runs: on a worker thread of its own, or on the event loop with everything else. */
export type PgliteThread = "worker" | "main"

export interface PgliteOptions {
  /** Where PGlite keeps its files (created if missing). In memory when omitted. */
  readonly dataDir?: string | undefined
  /** The schema that holds this tenant's tables. Default `"public"`. */
  readonly schema?: string | undefined
  /** Default from `SERVICE_API_PGLITE_THREAD`, else `"main"`. */
  readonly thread?: PgliteThread | undefined
}

export interface PostgresOptions {
  readonly url: Redacted.Redacted
  /** The schema that holds this tenant's tables. Default `"public"`. */
  readonly schema?: string | undefined
  /** How long connecting (and authenticating) may take before start-up fails. Default 5 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
  /** Pool size. Default 10. */
  readonly maxConnections?: number | undefined
}

/**
 * Embedded PostgreSQL (PGlite with pgvector), persisted under `dataDir` or in memory, closed with the layer's scope.
 * By default PGlite runs on the event loop; `thread: "worker"` moves it to a worker thread of its own, so SQL uses the
 * second core while the event loop serves HTTP. Measured with bench/load.ts (50 HTTP clients, 10k memories) the event
 * loop wins where agents spend their time: retain-only 50 against 33 req/s and mixed 80/20 35 against 24 req/s
 * (every statement of a retain's transaction pays the hop between threads), recall-only 33 against 35. Either way
 * PGlite is a single session, so the client is a pool of exactly one connection: statements from concurrent fibers
 * queue on it (pipelined on the worker) and a transaction holds it until it ends. A pool rather than
 * `PgClient.makeClient` because the driver closes a connection for good when a row cannot be decoded; the pool then
 * opens a new one (the bridge resets the session for it) where a lone connection would leave every later query
 * failing until restart.
 */
export const pglite = (options: PgliteOptions = {}): Layer.Layer<Sql, DatabaseStartupError> =>
  PgClient.layerFrom(
    Effect.gen(function*() {
      const thread = options.thread ?? (yield* threadConfig)
      // Acquired first, released last (after PGlite has closed and flushed the directory).
      yield* lockDataDir(options.dataDir)
      const db = yield* Effect.acquireRelease<ClosablePglite, unknown, never, never>(
        thread === "worker"
          ? PgliteWorker.start(options.dataDir)
          : Effect.tryPromise({ try: () => openPglite(options.dataDir), catch: identity }),
        // Closing flushes PGlite's data directory; the worker thread ends after it.
        (db) =>
          Effect.tryPromise(() => db.close()).pipe(
            Effect.catch((error) => Effect.logWarning("PGlite did not close cleanly", error))
          )
      )
      if (db instanceof PgliteWorker.PgliteWorker) {
        // Queries fail from then on, each with a terse reason; say once, loudly, why.
        yield* Effect.promise(() => db.lost).pipe(
          Effect.flatMap((reason) =>
            Effect.logError(`The PGlite worker is gone; every query fails until restart: ${reason.message}`)
          ),
          Effect.forkScoped
        )
      }
      const client = yield* pgliteClient(db, options.schema ?? "public", thread === "worker")
      // Bulk loads may use PGlite's own COPY from a blob, on either thread (src/storage/EmbeddedCopy.ts).
      registerCopyLoader(
        client,
        db instanceof PGlite
          ? (statement, data) => db.query(statement, [], { blob: new Blob([data]) }).then(() => undefined)
          : (statement, data) => (db as PgliteWorker.PgliteWorker).copyFrom(statement, data)
      )
      return client
    }).pipe(
      Effect.mapError((error) =>
        new DatabaseStartupError({ message: `Cannot open PGlite ${where(options)}: ${describeErrorChain(error)}` })
      )
    )
  )

/**
 * A client over an open PGlite (in process or on a worker, which `pipeline`s), prepared like `pglite`'s. The caller
 * owns `db` and closes it after the client's scope.
 */
export const pgliteClient = Effect.fnUntraced(function*(
  db: PgliteStream.PgliteProtocol,
  schema: string,
  pipeline: boolean
) {
  const types = PgTypes.makeRegistry()
  const options = clientOptions(schema, types)
  const client = yield* PgClient.make({
    ...options,
    // PGlite's pages live in this process's memory, so an index probe costs about what a sequential page read does;
    // with PostgreSQL's default (4, for spinning disks) the planner scanned 235k entity mentions to find those of
    // 1,000 memories (the graph view: 170 ms against 45). 1.1 is the usual setting for data held in memory.
    startupParameters: { ...options.startupParameters, random_page_cost: "1.1" },
    stream: () => PgliteStream.make(db),
    username: "postgres",
    database: "postgres",
    maxConnections: 1,
    // On a worker, statements of concurrent fibers are pipelined onto the one session (transactions and streams still
    // hold it alone) and the bridge hands PGlite all that has arrived in one call, so PGlite keeps working while the
    // event loop is busy; without it each statement waited for a turn of a loaded event loop (recall under 50 HTTP
    // clients: about 0.4x the main-thread throughput). On the event loop, pipelining would let a run of statements
    // hold the loop: queries in a loop starved other work completely in bench/pglite-thread.ts.
    multiplex: pipeline,
    // Nothing is gained by closing an in-process connection that sits idle.
    idleTimeout: Duration.infinity
  })
  yield* prepare(client, schema, types)
  return markSessionHolders(client)
})

/** What the layer opens and closes: the bridge's view of PGlite, on whichever thread it runs. */
type ClosablePglite = PgliteStream.PgliteProtocol & { readonly close: () => Promise<void> }

const threadConfig = Config.Literals(["worker", "main"], "SERVICE_API_PGLITE_THREAD").pipe(
  Config.withDefault("worker" as const),
  Effect.mapError((error) => new Error(`SERVICE_API_PGLITE_THREAD must be "worker" or "main" (${error.message})`))
)

/**
 * A PostgreSQL server reached through a connection pool. Start-up connects once and fails within `connectTimeout`
 * with a message naming the host and port (never the password) when the server cannot be reached or prepared.
 */
export const postgres = (options: PostgresOptions): Layer.Layer<Sql, DatabaseStartupError> =>
  PgClient.layerFrom(
    Effect.gen(function*() {
      const schema = options.schema ?? "public"
      const types = PgTypes.makeRegistry()
      const client = yield* PgClient.make({
        ...clientOptions(schema, types),
        url: options.url,
        connectTimeout: options.connectTimeout ?? "5 seconds",
        maxConnections: options.maxConnections ?? 10
      })
      yield* prepare(client, schema, types)
      return markSessionHolders(client)
    }).pipe(
      Effect.mapError((error) =>
        new DatabaseStartupError({
          message: scrubPassword(
            `Cannot start PostgreSQL at ${target(options.url)}: ${describeErrorChain(error)}`,
            options.url
          )
        })
      )
    )
  )

/**
 * Chooses from configuration: PostgreSQL when `SERVICE_API_DATABASE_URL` is set (and not empty), otherwise PGlite
 * under `${SERVICE_API_DATA_DIR ?? "./.engram"}/pglite` on the thread `SERVICE_API_PGLITE_THREAD` names (`main`).
 * `SERVICE_API_DATABASE_SCHEMA` names the schema (`public`); `SERVICE_API_DATABASE_POOL_SIZE` the PostgreSQL pool's
 * connections (10), over which concurrent reads run in parallel.
 */
export const layerConfig: Layer.Layer<Sql, DatabaseStartupError | Config.ConfigError> = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.Redacted("SERVICE_API_DATABASE_URL"))
    const schema = yield* Config.String("SERVICE_API_DATABASE_SCHEMA").pipe(Config.withDefault("public"))
    if (Option.isSome(url) && Redacted.value(url.value).trim() !== "") {
      const maxConnections = yield* Config.schema(poolSize, "SERVICE_API_DATABASE_POOL_SIZE").pipe(
        Config.withDefault(10)
      )
      return postgres({ url: url.value, schema, maxConnections })
    }
    const dataDir = yield* Config.String("SERVICE_API_DATA_DIR").pipe(Config.withDefault("./.engram"))
    return pglite({ dataDir: Path.join(dataDir, "pglite"), schema })
  })
)

/** Connections in the PostgreSQL pool: concurrent requests run their statements in parallel over them. */
const poolSize = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 1000 }))

const where = (options: PgliteOptions): string =>
  options.dataDir === undefined ? "in memory" : `at ${Path.resolve(options.dataDir)}`

/**
 * Settings both variants share. `int8` (e.g. `count(*)`) columns decode to `bigint`: cast to `int` in SQL where a
 * `number` is wanted. JSON values keep their keys as stored (`transformJson: false`): only column names are renamed.
 */
const clientOptions = (schema: string, types: PgTypes.Registry) => ({
  startupParameters: { search_path: searchPath(schema) },
  transformResultNames: Str.snakeToCamel,
  transformQueryNames: Str.camelToSnake,
  transformJson: false,
  types
})

/**
 * Creates the schema and the extension when missing, then registers the vector codec and the float4 one
 * (`Float4.ts`). Checking before creating keeps a role without CREATE rights working against a database prepared for
 * it; the advisory lock keeps two processes starting at once from racing on `CREATE EXTENSION`.
 */
const prepare = Effect.fnUntraced(function*(sql: PgClient.PgClient, schema: string, types: PgTypes.Registry) {
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_catalog.pg_advisory_xact_lock(${bootstrapLock})`
    const schemas = yield* sql`SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ${schema}`
    if (schemas.length === 0) yield* sql`CREATE SCHEMA ${sql(schema)}`.withoutTransform
    const extensions = yield* sql`SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'vector'`
    if (extensions.length === 0) yield* sql`CREATE EXTENSION vector WITH SCHEMA public`
  }))
  yield* PgVector.register(sql, types)
  Float4.register(types)
})

/** An arbitrary constant shared by every engram process: the key of the start-up advisory lock. */
const bootstrapLock = 0x656e6772

const searchPath = (schema: string): string =>
  schema === "public" ? "public" : `"${schema.replaceAll("\"", "\"\"")}", public`

/** `host:port` of a connection URL, for messages. */
const target = (url: Redacted.Redacted): string => {
  const parsed = URL.parse(Redacted.value(url))
  if (parsed === null) return "an unparsable URL"
  const host = parsed.searchParams.get("host") ?? (parsed.hostname === "" ? "localhost" : parsed.hostname)
  return `${host}:${parsed.searchParams.get("port") ?? (parsed.port === "" ? "5432" : parsed.port)}`
}

/** Hides the URL's password, as written and percent-decoded, wherever it appears in `message`. */
const scrubPassword = (message: string, url: Redacted.Redacted): string => {
  const raw = URL.parse(Redacted.value(url))?.password ?? ""
  const secrets = [raw, Option.getOrElse(decodeComponent(raw), () => raw)].filter((secret) => secret !== "")
  return secrets.reduce((scrubbed, secret) => scrubbed.replaceAll(secret, "***"), message)
}

const decodeComponent = Option.liftThrowable(decodeURIComponent)
