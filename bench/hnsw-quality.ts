/**
 * What the HNSW index's build options cost each write and what they give each search, on the vectors engram stores:
 * synthetic conversation turns (`support/Conversation.ts`) embedded with the offline GloVe embedder. For each pair
 * of options (m, ef_construction) a table of its own takes the memories in batches of 500 through the index, as
 * retains insert them (the insertion's wall time per row is the write cost), then unseen turns are searched for:
 * the index's top 10 (`hnsw.ef_search` 40, pgvector's default, and 80) against the exact top 10 of a sequential
 * scan (recall@10), and their time. PostgreSQL only (ENGRAM_BENCH_DATABASE_URL); each run uses a
 * schema of its own, dropped at the end. Measurement only.
 *
 *   node bench/hnsw-quality.ts [memories=50000] [queries=200]
 */
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { glove } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { postgres } from "../layers/storage/SqlLive.ts"
import { Embeddings } from "../src/models/Embeddings.ts"
import { turnAt } from "./support/Conversation.ts"

const memories = Number(process.argv[2] ?? 50_000)
const queries = Number(process.argv[3] ?? 200)
const url = process.env["ENGRAM_BENCH_DATABASE_URL"] ?? "postgres://engram:engram@127.0.0.1:5432/engram_test"
const schema = `bench_hnsw_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`
const options = [{ m: 12, efConstruction: 40 }, { m: 8, efConstruction: 32 }, { m: 16, efConstruction: 64 }]
const batch = 500
/** 40 is pgvector's default, which retain's neighbour search uses; recall's SQL path asks for twice its depth. */
const efSearches = [40, 80]

const p50 = (times: Array<number>) => times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!.toFixed(2)

const literal = (vector: Float32Array) => `[${Array.from(vector, (x) => x.toFixed(6)).join(",")}]`

const embedAll = (texts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const embeddings = yield* Embeddings
    const out: Array<string> = []
    for (let start = 0; start < texts.length; start += 1_000) {
      const vectors = yield* embeddings.embedDocuments(texts.slice(start, start + 1_000))
      out.push(...vectors.map(literal))
    }
    return out
  })

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const stored = yield* embedAll(Array.from({ length: memories }, (_, n) => turnAt(11, n).content))
  const searched = yield* embedAll(Array.from({ length: queries }, (_, n) => turnAt(12, n).content))
  const dims = sql.literal(String(stored[0]!.split(",").length))
  console.log(`${memories} memories, ${queries} queries, load average ${loadavg()[0]!.toFixed(1)}`)
  console.log(
    "\n| m | ef_construction | insert, ms per row | ef_search | recall@10 | index search p50 ms | exact scan p50 ms |"
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|")
  for (const { m, efConstruction } of options) {
    const table = sql(`t_${m}_${efConstruction}`)
    yield* sql`CREATE TABLE ${table} (id int PRIMARY KEY, embedding vector(${dims}))`
    const settings = sql.literal(`m = ${m}, ef_construction = ${efConstruction}`)
    yield* sql`CREATE INDEX ON ${table} USING hnsw (embedding vector_cosine_ops) WITH (${settings})`
    const started = performance.now()
    for (let start = 0; start < stored.length; start += batch) {
      const rows = stored.slice(start, start + batch).map((embedding, k) => ({ id: start + k, embedding }))
      yield* sql`INSERT INTO ${table} (id, embedding)
        SELECT x.id, x.embedding::vector FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS x(id int, embedding text)`
    }
    const insertMs = (performance.now() - started) / stored.length
    yield* sql`ANALYZE ${table}`
    // The exact top 10 orders by an expression the index cannot serve (a sequential scan, whatever plan a
    // prepared statement cached): `+ 0` on the distance.
    const exact: Array<Set<number>> = []
    const exactTimes: Array<number> = []
    for (const query of searched) {
      const begun = performance.now()
      const rows = yield* sql<{ id: number }>`
        SELECT id FROM ${table} ORDER BY (embedding <=> ${query}::vector) + 0 LIMIT 10`
      exactTimes.push(performance.now() - begun)
      exact.push(new Set(rows.map((row) => row.id)))
    }
    for (const efSearch of efSearches) {
      let found = 0
      const indexTimes: Array<number> = []
      for (const [q, query] of searched.entries()) {
        const rows = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT set_config('hnsw.ef_search', ${String(efSearch)}, true)`
          const begun = performance.now()
          const rows = yield* sql<{ id: number }>`
            SELECT id FROM ${table} ORDER BY embedding <=> ${query}::vector LIMIT 10`
          indexTimes.push(performance.now() - begun)
          return rows
        }))
        found += rows.filter((row) => exact[q]!.has(row.id)).length
      }
      console.log(
        `| ${m} | ${efConstruction} | ${insertMs.toFixed(3)} | ${efSearch} | ` +
          `${(found / (10 * searched.length)).toFixed(3)} | ${p50(indexTimes)} | ${p50(exactTimes)} |`
      )
    }
    yield* sql`DROP TABLE ${table}`
  }
  yield* sql`DROP SCHEMA ${sql(schema)} CASCADE`
})

const layer = Layer.mergeAll(
  glove({
    cacheDir: process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
  }),
  postgres({ url: Redacted.make(url), schema })
)

Effect.runPromise(Effect.provide(program, layer)).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
