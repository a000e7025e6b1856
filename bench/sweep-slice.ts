/**
 * What one slice of a sweep costs (issue 38): a bank of N memories (synthetic conversation facts with entities,
 * links and observations, `bench/support/SyntheticBank.ts`) on PGlite (on the event loop, so this process's CPU and
 * `rchar` are PGlite's), then slices of 200 of its oldest memories deleted with everything derived
 * (`deleteEverythingDerived`, the path forget and both sweeps share). Each slice runs in a transaction that is
 * rolled back, so every slice sees the same bank. Prints per slice the CPU seconds and bytes read (`rchar` of
 * /proc/self/io), and per SQL statement the same, summed over the slices (the statements the slice ran, from their
 * tracing spans). A slice should cost what it deletes, not what the bank holds.
 * Rerun: `node bench/sweep-slice.ts [memories=10000] [slices=3] [dataDir] [--commit]` (a given dataDir that already
 * holds the seeded bank is reused, which saves the seeding at 100k; `--commit` commits the slices, see below).
 */
import { Effect, Layer, Tracer } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Llm } from "../src/index.ts"
import { makeConsolidationRequests } from "../src/memory/consolidation/ConsolidationRequests.ts"
import { deleteEverythingDerived, sweptOnly } from "../src/memory/forgetting/DerivedDeletion.ts"
import { seedUnlessHeld } from "./support/SyntheticBank.ts"
import { tempDir } from "./support/ServerProcess.ts"

const positional = process.argv.slice(2).filter((arg) => !arg.startsWith("--"))
const memories = Number(positional[0] ?? 10_000)
const slices = Number(positional[1] ?? 3)
const dataDir = positional[2] ?? tempDir("engram-sweep-slice-")
/**
 * `--commit`: the slices commit one after another, as a sweep's do, so the deleted rows stay behind as dead tuples
 * (PGlite has no autovacuum) and each slice meets what the earlier ones left. It empties the seeded bank.
 */
const commit = process.argv.includes("--commit")
const bankId = "slice-a"
const sliceSize = 200

const rchar = () => Number(readFileSync("/proc/self/io", "utf8").match(/^rchar:\s+(\d+)/m)?.[1] ?? Number.NaN)
const cpu = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1e6
}

interface Cost {
  calls: number
  cpu: number
  bytes: number
}
const perStatement = new Map<string, Cost>()
let recording = false

/** A span per SQL statement carries its text: its CPU and bytes read are counted from its start to its end. */
const tracer = Tracer.make({
  span(options) {
    const span = new Tracer.NativeSpan(options)
    const cpu0 = cpu()
    const read0 = rchar()
    const end = span.end.bind(span)
    span.end = (endTime, exit) => {
      const text = span.attributes.get("db.query.text")
      if (recording && typeof text === "string") {
        const key = text.replace(/\s+/g, " ").slice(0, 150)
        const cost = perStatement.get(key) ?? { calls: 0, cpu: 0, bytes: 0 }
        cost.calls++
        cost.cpu += cpu() - cpu0
        cost.bytes += rchar() - read0
        perStatement.set(key, cost)
      }
      end(endTime, exit)
    }
    return span
  }
})

class Rollback {
  readonly _tag = "Rollback"
}

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const consolidation = yield* makeConsolidationRequests
  yield* seedUnlessHeld(bankId, memories, dataDir)
  const counts = yield* sql<{ kind: string; n: number }>`
    SELECT fact_type AS kind, count(*)::int AS n FROM memory_units WHERE bank_id = ${bankId} GROUP BY 1
    UNION ALL SELECT 'links', count(*)::int FROM memory_links WHERE bank_id = ${bankId}
    UNION ALL SELECT 'mentions', count(*)::int FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id
      WHERE e.bank_id = ${bankId}
    UNION ALL SELECT 'entities', count(*)::int FROM entities WHERE bank_id = ${bankId}
    UNION ALL SELECT 'chunks', count(*)::int FROM chunks WHERE bank_id = ${bankId}`
  console.log(`bank: ${counts.map((row) => `${row.kind} ${row.n}`).join(", ")}; dataDir ${dataDir}`)

  console.log("| slice | memories deleted | CPU s | MB read |")
  console.log("|---:|---:|---:|---:|")
  for (let n = 0; n < slices; n++) {
    let deleted = 0
    let spent = { cpu: 0, bytes: 0 }
    yield* Effect.gen(function*() {
      // The oldest facts, as an age limit picks them (the pick is not counted: each sweep picks its own way).
      const ids = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId}
        AND fact_type <> 'observation' ORDER BY created_at, id OFFSET ${commit ? 0 : n * sliceSize} LIMIT ${sliceSize}`
      const cpu0 = cpu()
      const read0 = rchar()
      recording = true
      const derived = yield* deleteEverythingDerived(consolidation, bankId, sweptOnly(ids.map((row) => row.id)))
      recording = false
      spent = { cpu: cpu() - cpu0, bytes: rchar() - read0 }
      deleted = derived.deletion.memories.length
      if (commit) return
      return yield* Effect.fail(new Rollback())
    }).pipe(sql.withTransaction, Effect.catchIf((error) => error instanceof Rollback, () => Effect.void))
    console.log(`| ${n + 1} | ${deleted} | ${spent.cpu.toFixed(2)} | ${(spent.bytes / 1e6).toFixed(1)} |`)
  }
  // The plans of the statements that scale with the bank, and the triggers (foreign keys, change log) of the delete.
  const ids = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId}
    AND fact_type <> 'observation' ORDER BY created_at, id LIMIT ${sliceSize}`).map((row) => row.id)
  const explain = (label: string, statement: string) =>
    Effect.gen(function*() {
      const plan = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement}`)
      console.log(`\n${label}:\n${plan.map((row) => Object.values(row)[0]).join("\n")}`)
      return yield* Effect.fail(new Rollback())
    }).pipe(sql.withTransaction, Effect.catchIf((error) => error instanceof Rollback, () => Effect.void))
  const idList = ids.map((id) => `'${id}'`).join(",")
  yield* explain(
    "the slice's memory delete",
    `DELETE FROM memory_units WHERE bank_id = '${bankId}' AND id IN (${idList})`
  )
  // The statement-level trigger that drops the links of deleted memories, with its transition table as a temporary
  // table of the same ids (a plan inside a trigger does not show in EXPLAIN).
  yield* Effect.gen(function*() {
    yield* sql.unsafe(`CREATE TEMP TABLE gone AS SELECT id FROM memory_units WHERE id IN (${idList})`)
    for (const column of ["from_id", "to_id"]) {
      const plan = yield* sql.unsafe<Record<string, string>>(
        `EXPLAIN (ANALYZE, BUFFERS) DELETE FROM memory_links l USING gone g WHERE l.${column} = g.id`
      )
      console.log(`\nlinks by ${column}:\n${plan.map((row) => Object.values(row)[0]).join("\n")}`)
    }
    return yield* Effect.fail(new Rollback())
  }).pipe(sql.withTransaction, Effect.catchIf((error) => error instanceof Rollback, () => Effect.void))
  const chunkList = (yield* sql<{ chunkId: string }>`SELECT chunk_id FROM memory_units WHERE id IN ${sql.in(ids)}`)
    .map((row) => `'${row.chunkId}'`).join(",")
  yield* explain(
    "orphaned chunks",
    `DELETE FROM chunks c WHERE c.bank_id = '${bankId}' AND c.id IN (${chunkList})
      AND NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.chunk_id = c.id)`
  )
  console.log(`\nper statement, summed over ${slices} slices:`)
  console.log("| statement | calls | CPU s | MB read |")
  console.log("|---|---:|---:|---:|")
  for (const [text, cost] of [...perStatement].sort((a, b) => b[1].cpu - a[1].cpu)) {
    console.log(
      `| ${text.replace(/\|/g, "\\|")} | ${cost.calls} | ${cost.cpu.toFixed(3)} | ${(cost.bytes / 1e6).toFixed(1)} |`
    )
  }
}).pipe(Effect.orDie)

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
process.env["SERVICE_API_PGLITE_THREAD"] = "main"
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(
  program.pipe(Effect.provide(engramWith({ dataDir }, models)), Effect.withTracer(tracer))
).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
