/**
 * Background-operation throughput through the bank actors, against a baseline measured in the same run: the raw
 * SQL an operation cannot avoid (insert the row, claim it, settle it). Data: N no-op operations spread over 4
 * banks on embedded PGlite in a temporary data dir. Rerun: `node bench/operations.ts [N]` (default 2000).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Banks, engramWith, Operations, TaskRegistry } from "../src/index.ts"
import { tempDir } from "./support/ServerProcess.ts"

const count = Number(process.argv[2] ?? 2000)
const bankIds = ["b0", "b1", "b2", "b3"]

const waitUntilSettled = Effect.fn(function*(ids: ReadonlyArray<readonly [string, string]>) {
  const operations = yield* Operations
  for (const [bank, id] of ids) {
    while (true) {
      const record = yield* operations.result(bank, id)
      if (record.status === "completed") break
      yield* Effect.sleep("5 millis")
    }
  }
})

const program = Effect.gen(function*() {
  const banks = yield* Banks
  const operations = yield* Operations
  const registry = yield* TaskRegistry
  const sql = yield* SqlClient.SqlClient
  yield* registry.register("noop", () => Effect.succeed(null))
  yield* Effect.forEach(bankIds, (id) => banks.ensure(id), { discard: true })

  const baselineStart = performance.now()
  for (let i = 0; i < count; i++) {
    const id = `baseline-${i}`
    yield* sql`INSERT INTO operations (id, bank_id, task_type, status) VALUES (${id}, 'b0', 'baseline', 'pending')`
    yield* sql`UPDATE operations SET status = 'running', attempts = attempts + 1 WHERE id = ${id}`
    yield* sql`UPDATE operations SET status = 'completed', result = 'null' WHERE id = ${id} AND status = 'running'`
  }
  const baselineMs = performance.now() - baselineStart

  const engineStart = performance.now()
  const submitted: Array<readonly [string, string]> = []
  for (let i = 0; i < count; i++) {
    const bankId = bankIds[i % bankIds.length]!
    const op = yield* operations.submit({ bankId, taskType: "noop", payload: {} })
    submitted.push([bankId, op.id])
  }
  yield* waitUntilSettled(submitted)
  const engineMs = performance.now() - engineStart

  const rows = [
    ["raw SQL per operation (baseline)", count / (baselineMs / 1000), 1],
    ["submit + actor + settle", count / (engineMs / 1000), engineMs / baselineMs]
  ] as const
  console.log(`operations: ${count} no-op operations over ${bankIds.length} banks, PGlite (temporary data dir)`)
  console.log("| path | operations/s | time vs baseline |")
  console.log("|---|---:|---:|")
  for (const [name, rate, ratio] of rows) console.log(`| ${name} | ${rate.toFixed(0)} | ${ratio.toFixed(2)}x |`)
})

const dataDir = tempDir("engram-bench-")
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir })))).catch((error) => {
  console.error(error)
  process.exit(1)
})
