/**
 * Child-process entry that seeds synthetic banks into one data directory (or PostgreSQL schema) through the
 * library, then closes the database, so a server can open it next; or drops the bench's PostgreSQL schemas.
 * Run by bench/load.ts with one JSON argument; prints one JSON line. Seeding in a separate process keeps the load
 * generator's heap small.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { GloveEmbeddingsLive } from "../../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../../src/index.ts"
import { seedBank } from "./SyntheticBank.ts"

export interface DropJob {
  readonly databaseUrl: string
  readonly dropSchemas: ReadonlyArray<string>
}

export interface SeedJob {
  readonly dataDir: string
  readonly databaseUrl?: string
  readonly databaseSchema?: string
  readonly endsAt: string
  readonly banks: ReadonlyArray<{
    readonly bankId: string
    readonly memories: number
    readonly streamSeed: number
    readonly consolidated: boolean
  }>
}

const job = JSON.parse(process.argv[2] ?? "{}") as SeedJob | DropJob

const drop = (job: DropJob) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const schema of job.dropSchemas) yield* sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`
    return job.dropSchemas
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(job.databaseUrl), maxConnections: 1 })))

const seed = (job: SeedJob) =>
  Effect.gen(function*() {
    const results = []
    for (const bank of job.banks) {
      const started = performance.now()
      const counts = yield* seedBank({ ...bank, endsAt: new Date(job.endsAt) })
      results.push({ bankId: bank.bankId, ...counts, seconds: (performance.now() - started) / 1000 })
    }
    return results
  }).pipe(Effect.provide(engramWith({
    dataDir: job.dataDir,
    enableObservations: false,
    ...(job.databaseUrl === undefined
      ? {}
      : { databaseUrl: Option.some(Redacted.make(job.databaseUrl)), databaseSchema: job.databaseSchema ?? "public" })
  }, Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive))))

Effect.runPromise<unknown, unknown>("dropSchemas" in job ? drop(job) : seed(job)).then(
  (results) => {
    process.stdout.write(JSON.stringify(results) + "\n")
    process.exit(0)
  },
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
