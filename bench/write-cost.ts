/**
 * Where a retained item's cost goes: synthetic conversation turns retained through the embeddable library in batches
 * of 100 (observations off, anomaly detection on as by default), into a bank that already holds `--base` memories,
 * with every SQL statement and every retain stage timed by a tracer (wall time as the client sees it, per batch and
 * per item). Then, on the same data, what each index of the written tables and each trigger costs: a scratch copy
 * of the table without indexes takes 100-row inserts, with each index alone added in turn (its cost is the
 * difference), and EXPLAIN ANALYZE of a rolled-back insert into the real table names the triggers' time.
 * Embedded PGlite always; PostgreSQL too when ENGRAM_BENCH_DATABASE_URL is set. Measurement only.
 * Rerun: `node bench/write-cost.ts [--base 3000] [--batches 10] [--statements-only] [--postgres-only]
 * [--observations] [--batch 100] [--concurrency 1] [--count-triggers-ab 2] [--recalled]`.
 * `--count-triggers-ab N` measures instead what the stats counts' triggers (migration 0039) add to a retain: after
 * the seeding, N rounds of `--batches` retains with the triggers and N without (dropped and created again in the
 * bench's own scratch database, alternating, so load drifts hit both alike), each round's statements, node CPU and
 * database CPU per item.
 */
import { Effect, Layer, Option, Redacted, Tracer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { glove } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { engramWith, Llm, Recall, Retain } from "../src/index.ts"
import { turnAt } from "./support/Conversation.ts"
import { tempDir, tempSchema } from "./support/ServerProcess.ts"

const argv = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const index = argv.indexOf(`--${name}`)
  return index >= 0 ? Number(argv[index + 1]) : fallback
}
const base = option("base", 3000)
/** `--statements-only`: skip the per-index and per-trigger measurement (a quicker before/after of the statements). */
const statementsOnly = argv.includes("--statements-only")
/** `--postgres-only`: skip PGlite (needs ENGRAM_BENCH_DATABASE_URL). */
const postgresOnly = argv.includes("--postgres-only")
const batches = option("batches", 10)
/** `--batch N`: items per retain (100; 1 is what `bench/load.ts` sends). */
const batch = option("batch", 100)
/** `--concurrency N`: retains in flight at once (1; `bench/load.ts` has 50 clients). */
const concurrency = option("concurrency", 1)
/**
 * `--observations`: observations on (offline consolidation, as by default in the server). The figures then cover
 * the retains and the consolidation they queue, until every fact is consolidated; the consolidation's statements
 * are traced too.
 */
const observations = argv.includes("--observations")
/**
 * `--recalled`: one recall into the bank after the seeding, so its brain is loaded and kept current by the retains,
 * as in a bank an agent also recalls from (the retains' neighbour searches then read the brain, not the tables).
 */
const recalled = argv.includes("--recalled")
/** `--count-triggers-ab N`: rounds with and without the stats counts' triggers (see the header). */
const countTriggerRounds = option("count-triggers-ab", 0)

/** A statement's name in the table: its verb, table and (for links) link type, without parameters. */
const label = (sqlText: string) => {
  const text = sqlText.replace(/\s+/g, " ").trim()
  if (/^INSERT INTO memory_links .* UNION ALL /.test(text)) return "INSERT memory_links (every kind, one statement)"
  const linkType = /INSERT INTO memory_links .*?'(temporal|semantic|entity)'/.exec(text)?.[1]
  if (linkType !== undefined) return `INSERT memory_links (${linkType})`
  if (/^INSERT INTO memory_links/.test(text)) return "INSERT memory_links (causal)"
  if (/^WITH added AS \( INSERT INTO unit_entities/.test(text)) return "INSERT unit_entities + UPDATE entities counts"
  if (/jsonb_to_recordset.*embedding vector\) CROSS JOIN LATERAL/.test(text)) return "SELECT nearest (near-duplicates)"
  if (/^SELECT ARRAY\( SELECT content_hash FROM memory_units/.test(text)) {
    return "SELECT content_hash (duplicates; widens the HNSW search)"
  }
  if (/^SELECT e\.id, e\.canonical_name/.test(text)) return "SELECT entity aliases (resolution)"
  if (/^WITH pairs AS .* UNION ALL SELECT .statement./.test(text)) {
    return "SELECT anomaly pairs, mentions and statements"
  }
  if (/^WITH pairs AS/.test(text)) return "SELECT anomaly pairs"
  if (/^SELECT o\.id, o\.text, o\.fact_type/.test(text)) return "SELECT anomaly candidates"
  if (/^SELECT ue\.unit_id, ue\.entity_id/.test(text)) return "SELECT anomaly entities"
  const verb = /^(INSERT INTO|UPDATE|DELETE FROM|SELECT .*? FROM|WITH \w+ AS \((?: \w+)* (?:INTO|FROM|UPDATE))\s+(\w+)/
    .exec(text)
  return verb === null ? text.slice(0, 50) : `${verb[1]!.split(" ")[0]} ${verb[2]}`
}

/** Milliseconds per label: SQL statements by what they do, retain stages by span name. */
const timings = new Map<string, { calls: number; ms: number }>()
const note = (key: string, ms: number) => {
  const entry = timings.get(key) ?? { calls: 0, ms: 0 }
  entry.calls++
  entry.ms += ms
  timings.set(key, entry)
}
const stages = new Set([
  "Retain.extract",
  "Retain.embed",
  "Retain.write",
  "Retain.process",
  "EntityResolver.resolve",
  "Consolidation.run",
  "OfflineConsolidator.plan",
  "ObservationMerge.merge",
  "ObservationWriter.write"
])

class TimedSpan extends Tracer.NativeSpan {
  override end(endTime: bigint, exit: Parameters<Tracer.NativeSpan["end"]>[1]) {
    const ms = Number(endTime - this.startTime) / 1e6
    const text = this.attributes.get("db.query.text")
    if (typeof text === "string") note(`sql: ${label(text)}`, ms)
    else if (stages.has(this.name)) note(`stage: ${this.name}`, ms)
    super.end(endTime, exit)
  }
}
const tracer = Tracer.make({ span: (options) => new TimedSpan(options) })

/**
 * CPU ticks (1/100 s) of the PostgreSQL backends serving this process, by backend pid: the backends are found by
 * the local ports of this process's connections to the server (`ss`), so other sessions on a shared server do not
 * count. Empty on PGlite (it runs inside this process, whose own CPU time is reported instead).
 */
const backendTicks = (databaseUrl: string | undefined) => {
  if (databaseUrl === undefined) return new Map<number, number>()
  const serverPort = new URL(databaseUrl).port || "5432"
  const lines = execFileSync("ss", ["-tnpH"], { encoding: "utf8" }).split("\n")
    .filter((line) => line.includes(`pid=${process.pid},`))
  const localPorts = new Set(lines.flatMap((line) => {
    const [, , , local, peer] = line.trim().split(/\s+/)
    return peer?.endsWith(`:${serverPort}`) ? [local!.slice(local!.lastIndexOf(":") + 1)] : []
  }))
  const ticks = new Map<number, number>()
  for (const line of execFileSync("ss", ["-tnpH"], { encoding: "utf8" }).split("\n")) {
    const [, , , local, peer] = line.trim().split(/\s+/)
    const pid = /pid=(\d+),/.exec(line)?.[1]
    if (
      local?.endsWith(`:${serverPort}`) && peer !== undefined &&
      localPorts.has(peer.slice(peer.lastIndexOf(":") + 1)) && pid !== undefined
    ) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks.set(Number(pid), Number(fields[11]) + Number(fields[12]))
    }
  }
  return ticks
}

/** Database CPU seconds between two readings of `backendTicks` (a backend opened meanwhile counts whole). */
const databaseSeconds = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, ticks]) => sum + ticks - (before.get(pid) ?? 0), 0) / 100

const item = (n: number) => ({
  content: turnAt(3, n).content,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString()
})
const items = (from: number, count: number) => Array.from({ length: count }, (_, n) => item(from + n))

/** Milliseconds for `rounds` inserts of 100 copied rows into `scratch` (emptied first). */
const insertTime = (scratch: string, source: string, columns: string, select: string, rounds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`TRUNCATE ${scratch}`)
    const started = performance.now()
    for (let round = 0; round < rounds; round++) {
      yield* sql.unsafe(
        `INSERT INTO ${scratch} (${columns}) SELECT ${select} FROM ${source} LIMIT 100 OFFSET ${round * 100}`
      )
    }
    return (performance.now() - started) / rounds
  })

/** Each index of `table` alone on a scratch copy: ms per 100-row insert above the copy with no index. */
const indexCosts = (table: string, columns: string, select: string, variants: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const indexes = yield* sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ${table} AND schemaname = current_schema()`
    const candidates = [
      ...indexes,
      ...variants.map((indexdef, n) => ({
        indexname: `(variant ${n + 1}) ${indexdef.slice(indexdef.indexOf(" USING") + 1)}`,
        indexdef
      }))
    ]
    const scratch = `wc_${table}`
    yield* sql.unsafe(`CREATE TEMP TABLE ${scratch} (LIKE ${table} INCLUDING DEFAULTS)`)
    const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)
    const rounds = Math.max(1, Math.min(20, Math.floor((rows[0]?.n ?? 0) / 100)))
    // Twice without indexes, keeping the lower: the first run warms the cache.
    yield* insertTime(scratch, table, columns, select, rounds)
    const bare = yield* insertTime(scratch, table, columns, select, rounds)
    const costs: Array<{ index: string; ms: number }> = []
    for (const index of candidates) {
      const definition = index.indexdef.replace(/ ON (\S+\.)?\S+ /, ` ON ${scratch} `).replace(
        /INDEX \S+ ON/,
        "INDEX wc_index ON"
      )
      yield* sql.unsafe(definition)
      const ms = yield* insertTime(scratch, table, columns, select, rounds)
      yield* sql.unsafe(`DROP INDEX wc_index`)
      costs.push({ index: index.indexname, ms: ms - bare })
    }
    yield* sql.unsafe(`DROP TABLE ${scratch}`)
    return { bare, costs }
  })

class Rollback {
  readonly rows: ReadonlyArray<{ "QUERY PLAN": unknown }>
  constructor(rows: ReadonlyArray<{ "QUERY PLAN": unknown }>) {
    this.rows = rows
  }
}

/** Trigger time (FK checks included) of a rolled-back copy insert of 100 rows into the real table. */
const triggerCosts = (table: string, columns: string, select: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const plan = yield* sql.unsafe<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) INSERT INTO ${table} (${columns}) SELECT ${select} FROM ${table} LIMIT 100`
    ).pipe(
      // Failing inside the transaction rolls the copied rows back; the plan rides out on the failure.
      Effect.flatMap((rows) => Effect.fail(new Rollback(rows))),
      sql.withTransaction,
      Effect.catch((error) => error instanceof Rollback ? Effect.succeed(error.rows) : Effect.die(error))
    )
    const parsed = plan[0]!["QUERY PLAN"]
    const json = (typeof parsed === "string" ? JSON.parse(parsed) : parsed) as Array<{
      "Execution Time": number
      Triggers?: Array<{ "Trigger Name": string; Time: number; Calls: number }>
    }>
    return { total: json[0]!["Execution Time"], triggers: json[0]!.Triggers ?? [] }
  })

const unitColumns = `id, bank_id, text, fact_type, context, occurred_start, occurred_end, mentioned_at, document_id,
  chunk_id, metadata, tags, content_hash, embedding, embedding_model, search_text, item_index, fact_index`
const unitSelect = unitColumns.replace(/^id,/, "md5(random()::text || id),")
const linkColumns = "bank_id, from_id, to_id, link_type, weight"
const linkSelect = "bank_id, from_id, to_id, link_type || '-copy-' || md5(random()::text), weight"

/** With observations on: waits until no fact of the bank waits for consolidation and no operation is queued. */
const drained = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deadline = Date.now() + 30 * 60_000
    while (Date.now() < deadline) {
      const rows = yield* sql<{ facts: number; operations: number }>`
        SELECT (SELECT count(*)::int FROM memory_units WHERE bank_id = ${bank} AND consolidated_at IS NULL
                  AND fact_type IN ('world', 'experience')) AS facts,
               (SELECT count(*)::int FROM operations WHERE bank_id = ${bank}
                  AND status IN ('pending', 'running')) AS operations`
      if (!observations || (rows[0]!.facts === 0 && rows[0]!.operations === 0)) return
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.die(new Error("consolidation did not catch up within 30 minutes"))
  })

/** The triggers migration 0039 added for the stats counts: name, table and the clause after `ON table`. */
const countTriggers = [
  [
    "memory_units_counted",
    "memory_units",
    "AFTER INSERT ON memory_units REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_units_inserted()"
  ],
  [
    "memory_units_write_time",
    "memory_units",
    "AFTER UPDATE OF updated_at ON memory_units FOR EACH ROW WHEN (NEW.updated_at IS DISTINCT FROM OLD.updated_at) EXECUTE FUNCTION bank_counts_unit_written()"
  ],
  [
    "memory_units_retyped",
    "memory_units",
    "AFTER UPDATE OF fact_type ON memory_units FOR EACH ROW WHEN (OLD.fact_type IS DISTINCT FROM NEW.fact_type) EXECUTE FUNCTION bank_counts_unit_retyped()"
  ],
  [
    "memory_links_counted_in",
    "memory_links",
    "AFTER INSERT ON memory_links REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_links_changed()"
  ],
  [
    "memory_links_counted_out",
    "memory_links",
    "AFTER DELETE ON memory_links REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bank_counts_links_changed()"
  ]
] as const

const setCountTriggers = (on: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const [name, table, clause] of countTriggers) {
      yield* sql.unsafe(on ? `CREATE TRIGGER ${name} ${clause}` : `DROP TRIGGER ${name} ON ${table}`)
    }
  })

/** `--count-triggers-ab`: alternating rounds with and without the counts' triggers, per item. */
const countTriggersAb = (bank: string, databaseUrl: string | undefined) =>
  Effect.gen(function*() {
    const retain = yield* Retain
    const rows: Array<{ on: boolean; statements: number; node: number; database: number; wall: number }> = []
    let next = base
    for (let round = 0; round < countTriggerRounds * 2; round++) {
      const on = round % 2 === 0
      if (round > 0) yield* setCountTriggers(on)
      statementCounts.clear()
      const databaseBefore = backendTicks(databaseUrl)
      const nodeBefore = process.cpuUsage()
      const started = performance.now()
      for (let b = 0; b < batches; b++) {
        yield* retain.retainNow(bank, { items: items(next, batch) })
        next += batch
      }
      const wall = performance.now() - started
      const node = process.cpuUsage(nodeBefore)
      const retained = batches * batch
      rows.push({
        on,
        statements: [...statementCounts.values()].reduce((n, calls) => n + calls, 0) / retained,
        node: (node.user + node.system) / 1000 / retained,
        database: databaseSeconds(databaseBefore, backendTicks(databaseUrl)) * 1000 / retained,
        wall: wall / retained
      })
    }
    yield* setCountTriggers(true)
    console.log(
      `\n| round | count triggers | statements per item | node CPU ms per item | database CPU ms per item | wall ms per item |` +
        `\n|---:|---|---:|---:|---:|---:|`
    )
    rows.forEach((row, index) =>
      console.log(
        `| ${index + 1} | ${row.on ? "on" : "off"} | ${row.statements.toFixed(2)} | ${row.node.toFixed(2)} | ` +
          `${databaseUrl === undefined ? "(in node)" : row.database.toFixed(2)} | ${row.wall.toFixed(2)} |`
      )
    )
    const mean = (on: boolean, key: "node" | "database" | "statements") => {
      const picked = rows.filter((row) => row.on === on)
      return picked.reduce((sum, row) => sum + row[key], 0) / picked.length
    }
    for (const key of ["statements", "node", "database"] as const) {
      if (key === "database" && databaseUrl === undefined) continue
      console.log(
        `mean ${key}: on ${mean(true, key).toFixed(2)}, off ${mean(false, key).toFixed(2)}, ` +
          `on/off ${(mean(true, key) / mean(false, key)).toFixed(3)}`
      )
    }
    // The triggers' own time, as the database reports it: a rolled-back 100-row copy insert into each table, twice
    // (the first call of a PL/pgSQL function in a session compiles it), the second kept.
    console.log(
      "\n| 100-row insert into | statement ms (EXPLAIN ANALYZE) | trigger | trigger ms |\n|---|---:|---|---:|"
    )
    for (
      const [table, columns, select] of [["memory_units", unitColumns, unitSelect], [
        "memory_links",
        linkColumns,
        linkSelect
      ]] as const
    ) {
      yield* triggerCosts(table, columns, select)
      const costs = yield* triggerCosts(table, columns, select)
      for (const trigger of costs.triggers) {
        console.log(
          `| ${table} | ${costs.total.toFixed(1)} | ${trigger["Trigger Name"]} (${trigger.Calls} calls) | ${
            trigger.Time.toFixed(2)
          } |`
        )
      }
    }
  })

const measure = (tier: string, databaseUrl?: string) =>
  Effect.gen(function*() {
    const retain = yield* Retain
    const sql = yield* SqlClient.SqlClient
    const bank = "write-cost"
    for (let from = 0; from < base; from += 100) {
      yield* retain.retainNow(bank, { items: items(from, Math.min(100, base - from)) })
    }
    yield* drained(bank)
    if (recalled) yield* (yield* Recall).recall(bank, { query: "the budget" })
    if (countTriggerRounds > 0) {
      console.log(
        `\n### ${tier}: the stats counts' triggers, ${batches} retains of ${batch} per round, bank of ${base}`
      )
      return yield* countTriggersAb(bank, databaseUrl)
    }
    timings.clear()
    statementCounts.clear()
    const databaseBefore = backendTicks(databaseUrl)
    const nodeBefore = process.cpuUsage()
    const started = performance.now()
    yield* Effect.forEach(
      Array.from({ length: batches }, (_, b) => b),
      (b) => retain.retainNow(bank, { items: items(base + b * batch, batch) }).pipe(Effect.withTracer(tracer)),
      { concurrency, discard: true }
    )
    const retainedAt = performance.now()
    yield* drained(bank)
    const wall = performance.now() - started
    const node = process.cpuUsage(nodeBefore)
    const database = databaseSeconds(databaseBefore, backendTicks(databaseUrl))
    const retained = batches * batch
    const counts = yield* sql<{ units: number; links: number; mentions: number }>`
      SELECT (SELECT count(*)::int FROM memory_units) AS units, (SELECT count(*)::int FROM memory_links) AS links,
        (SELECT count(*)::int FROM unit_entities) AS mentions`
    console.log(
      `\n### ${tier}: ${retained} items retained in batches of ${batch} (${concurrency} at once) into a bank of ${base}` +
        `, observations ${observations ? "on" : "off"}` +
        ` (${(retained / (wall / 1000)).toFixed(0)} items/s; ${(wall / retained).toFixed(2)} ms per item` +
        (observations
          ? `, of which ${((wall - (retainedAt - started)) / retained).toFixed(2)} catching up after`
          : "") +
        ")"
    )
    const statements = [...statementCounts.values()].reduce((n, calls) => n + calls, 0)
    console.log(`statements per item (every fiber, consolidation included): ${(statements / retained).toFixed(2)}`)
    console.log(
      "\n| statement | per item |\n|---|---:|\n" +
        [...statementCounts].sort((a, b) => b[1] - a[1]).map(([key, n]) => `| ${key} | ${(n / retained).toFixed(3)} |`)
          .join("\n")
    )
    const linkTypes = yield* sql<{ linkType: string; n: number }>`
      SELECT link_type, count(*)::int AS n FROM memory_links GROUP BY link_type ORDER BY count(*) DESC`
    console.log(
      `bank at the end: ${counts[0]!.units} memories, ${counts[0]!.links} links` +
        ` (${(counts[0]!.links / counts[0]!.units).toFixed(1)} per memory: ` +
        linkTypes.map((row) => `${row.linkType} ${(row.n / counts[0]!.units).toFixed(1)}`).join(", ") +
        `), ${counts[0]!.mentions} entity mentions`
    )
    console.log(
      `CPU per item: node ${((node.user + node.system) / 1000 / retained).toFixed(2)} ms` +
        (databaseUrl === undefined
          ? " (PGlite runs inside it)"
          : `, database ${(database * 1000 / retained).toFixed(2)} ms (this process's backends)`)
    )
    console.log("\n| what | calls per batch | ms per batch | ms per item | share of wall |\n|---|---:|---:|---:|---:|")
    for (const [key, entry] of [...timings].sort((a, b) => b[1].ms - a[1].ms)) {
      console.log(
        `| ${key} | ${(entry.calls / batches).toFixed(1)} | ${(entry.ms / batches).toFixed(1)} | ` +
          `${(entry.ms / retained).toFixed(3)} | ${((entry.ms / wall) * 100).toFixed(0)} % |`
      )
    }
    if (statementsOnly) return
    // Cheaper HNSW builds, for comparison with the index as configured.
    const hnsw = (options: string) =>
      `CREATE INDEX x ON memory_units USING hnsw ((embedding::vector(100)) vector_cosine_ops) WITH (${options}) WHERE vector_dims(embedding) = 100`
    for (
      const [table, columns, select, variants] of [
        ["memory_units", unitColumns, unitSelect, [
          hnsw("m = 8, ef_construction = 32"),
          hnsw("m = 12, ef_construction = 40")
        ]],
        ["memory_links", linkColumns, linkSelect, []],
        ["unit_entities", "unit_id, entity_id, unit_seq", "md5(random()::text || unit_id), entity_id, unit_seq", []]
      ] as const
    ) {
      const indexes = yield* indexCosts(table, columns, select, variants)
      // Twice, keeping the second: the first call of a PL/pgSQL trigger in a session compiles it.
      if (table !== "unit_entities") yield* triggerCosts(table, columns, select)
      const triggers = table === "unit_entities"
        ? { total: Number.NaN, triggers: [] }
        : yield* triggerCosts(table, columns, select)
      console.log(
        `\n${table}: a 100-row insert into a copy with no index ${indexes.bare.toFixed(1)} ms;` +
          ` into the real table ${triggers.total.toFixed(1)} ms (EXPLAIN ANALYZE)`
      )
      console.log("\n| index or trigger | ms per 100 rows |\n|---|---:|")
      for (const cost of indexes.costs.sort((a, b) => b.ms - a.ms)) {
        console.log(`| index ${cost.index} | ${cost.ms.toFixed(2)} |`)
      }
      for (const trigger of triggers.triggers) {
        console.log(`| trigger ${trigger["Trigger Name"]} (${trigger.Calls} calls) | ${trigger.Time.toFixed(2)} |`)
      }
    }
  })

const models = Layer.mergeAll(
  glove({
    cacheDir: process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
  }),
  Llm.layerNone
)

/**
 * Every statement run, by label, whatever fiber runs it (the bank actors, which run consolidation, trace nothing):
 * a statement transformer in the layers' context counts each one as it is compiled.
 */
const statementCounts = new Map<string, number>()
const traced = Layer.succeed(Statement.CurrentTransformer, (statement) => {
  const label_ = label(statement.compile()[0])
  statementCounts.set(label_, (statementCounts.get(label_) ?? 0) + 1)
  return Effect.succeed(statement)
})

const program = Effect.gen(function*() {
  if (!postgresOnly) {
    yield* measure("PGlite").pipe(
      Effect.provide(
        engramWith({ dataDir: tempDir("engram-write-cost-"), enableObservations: observations }, models).pipe(
          Layer.provideMerge(traced)
        )
      )
    )
  }
  const url = process.env["ENGRAM_BENCH_DATABASE_URL"]
  if (url !== undefined) {
    yield* measure("PostgreSQL", url).pipe(Effect.provide(
      engramWith({
        dataDir: tempDir("engram-write-cost-"),
        enableObservations: observations,
        databaseUrl: Option.some(Redacted.make(url)),
        databaseSchema: tempSchema(url, "bench_write_cost_")
      }, models).pipe(Layer.provideMerge(traced))
    ))
  }
})

Effect.runPromise(program).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
