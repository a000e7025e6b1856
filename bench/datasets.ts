/**
 * Dataset curation throughput: import of N chat rows from one JSONL text (validation, key numbering, one bulk
 * insert) and export of them through both adapters, against a baseline measured in the same run: a plain
 * `JSON.parse` of every line of the same file (the least any import must do). Data: N synthetic three-turn chat
 * examples (~350 bytes each) on embedded PGlite in a temporary data dir.
 * Rerun: `node bench/datasets.ts [N]` (default 10000).
 */
import { Effect } from "effect"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Datasets } from "../src/datasets/Datasets.ts"
import { TasteExport } from "../src/datasets/TasteExport.ts"
import { engramWith } from "../src/index.ts"
import { tempDir } from "./support/ServerProcess.ts"

const count = Number(process.argv[2] ?? 10_000)
// The GloVe table (unused here, but built with the engine) is converted once per machine, not per run.
process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")

const row = (n: number) => ({
  messages: [
    { role: "system", content: "You are a concise assistant for a hardware store." },
    {
      role: "user",
      content: `Customer ${n} asks: do you stock ${n % 7 === 0 ? "brass" : "steel"} hinges in size ${n % 40}?`
    },
    {
      role: "assistant",
      content: `Yes, we stock size ${n % 40} hinges; aisle ${n % 12}, shelf ${
        n % 5
      }. Ask at the counter for bulk orders.`
    }
  ]
})

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return { value, ms: performance.now() - start }
  })

const program = Effect.gen(function*() {
  const datasets = yield* Datasets
  const exporter = yield* TasteExport
  const jsonl = Array.from({ length: count }, (_, n) => JSON.stringify(row(n))).join("\n") + "\n"

  const baseline = yield* timed(
    Effect.sync(() => jsonl.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line)))
  )
  if (baseline.value.length !== count) throw new Error("baseline parsed the wrong number of rows")

  const dataset = yield* datasets.create("bench", { name: "bench", schema_type: "chat_messages" })
  const imported = yield* timed(datasets.importSets("bench", dataset.id, { jsonl }))
  if (imported.value.imported_count !== count) throw new Error(`imported ${imported.value.imported_count} of ${count}`)

  const chat = yield* timed(exporter.export("bench", { dataset_id: dataset.id, adapter_id: "chat_messages_jsonl" }))
  const atr = yield* timed(exporter.export("bench", { dataset_id: dataset.id, adapter_id: "atr_jsonl" }))
  if (chat.value.exportable_count !== count || atr.value.exportable_count !== count) throw new Error("export lost rows")

  const rate = (ms: number) => count / (ms / 1000)
  const rows = [
    ["JSON.parse of every line (baseline)", baseline.ms],
    ["import (validate + bulk insert)", imported.ms],
    ["export chat_messages_jsonl", chat.ms],
    ["export atr_jsonl", atr.ms]
  ] as const
  console.log(
    `datasets: ${count} chat rows, ${(jsonl.length / 1e6).toFixed(1)} MB of JSONL, PGlite (temporary data dir)`
  )
  console.log("| step | rows/s | time | vs baseline |")
  console.log("|---|---:|---:|---:|")
  for (const [name, ms] of rows) {
    console.log(`| ${name} | ${rate(ms).toFixed(0)} | ${ms.toFixed(0)} ms | ${(ms / baseline.ms).toFixed(1)}x |`)
  }
})

const dataDir = tempDir("engram-bench-")
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir })))).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
