/**
 * Offline retain throughput: synthetic conversation turns retained through the embeddable library (no HTTP),
 * against the embedder's raw throughput on the same texts in the same run (baseline), plus resident memory
 * at the end. Embedded PGlite always; PostgreSQL too when ENGRAM_BENCH_DATABASE_URL is set. Each size is retained
 * twice into fresh banks, with write-time anomaly detection on and off, and the last column is what detection
 * costs in retain time (target ≤ 20 %).
 * Rerun: `node bench/retain.ts [turns...]` (default 1000 10000); `ENGRAM_BENCH_EMBEDDER=onnx` measures with the
 * MiniLM-architecture stand-in model in ../shared/models instead of GloVe.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { glove, onnx } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { Embeddings, engramWith, Llm, Retain } from "../src/index.ts"
import { tempDir, tempSchema } from "./support/ServerProcess.ts"

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const turnCounts = sizes.length > 0 ? sizes : [1000, 10000]
const batchSize = 100

/** A small seeded generator, so every run retains the same turns. */
const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

const people = ["Caroline", "Melanie", "Jon", "Gina", "Tim", "Andrew", "Audrey", "Nate", "Joanna", "Evan"]
const places = ["Paris", "the lake", "Boston", "the gym", "grandma's house", "the beach", "Seattle", "the museum"]
const verbs = ["visited", "painted", "talked about", "signed up for", "cooked", "finished", "started", "planned"]
const things = [
  "a pottery class",
  "a marathon",
  "the new novel",
  "a support group",
  "a road trip",
  "a job interview",
  "a birthday party",
  "the garden",
  "a charity run",
  "a camping trip",
  "a guitar lesson",
  "a science fair"
]
const times = ["yesterday", "last week", "this morning", "two days ago", "last May", "on Sunday", "last year", ""]
const feelings = [
  "It was amazing.",
  "I felt so proud.",
  "It was harder than I expected.",
  "We laughed a lot.",
  "I can't wait to do it again.",
  "My kids loved it.",
  ""
]

const turns = (count: number) => {
  const next = random(42)
  const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(next() * list.length)]!
  return Array.from({ length: count }, (_, n) => {
    const speaker = pick(people)
    const text = `${speaker}: I ${pick(verbs)} ${pick(things)} in ${pick(places)} ${pick(times)} with ${pick(people)}` +
      ` (note ${n}). ${pick(feelings)}`
    return {
      content: text.replace(/\s+/g, " ").trim(),
      timestamp: new Date(Date.UTC(2023, 0, 1) + Math.floor(n / 20) * 86_400_000).toISOString(),
      metadata: { turn: String(n) }
    }
  })
}

const embedderLayer = process.env["ENGRAM_BENCH_EMBEDDER"] === "onnx"
  ? onnx({ model: "standin-random-minilm-l6", modelsDir: resolve(import.meta.dirname, "../../shared/models") })
  : glove({
    cacheDir: process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ?? join(tmpdir(), "engram-glove-cache", "models")
  })

const measure = (count: number) =>
  Effect.gen(function*() {
    const retain = yield* Retain
    const embeddings = yield* Embeddings
    const items = turns(count)
    const texts = items.map((item) => item.content)
    const embedStart = performance.now()
    for (let i = 0; i < texts.length; i += 256) yield* embeddings.embedDocuments(texts.slice(i, i + 256))
    const embedSeconds = (performance.now() - embedStart) / 1000
    const retainStart = performance.now()
    for (let i = 0; i < items.length; i += batchSize) {
      yield* retain.retainNow(`bench-${count}`, { items: items.slice(i, i + batchSize) })
    }
    const retainSeconds = (performance.now() - retainStart) / 1000
    return {
      count,
      embedRate: count / embedSeconds,
      retainRate: count / retainSeconds,
      retainSeconds,
      ratio: retainSeconds / embedSeconds
    }
  })

const measureWith = (count: number, settings: Parameters<typeof engramWith>[0]) =>
  measure(count).pipe(Effect.provide(engramWith(settings, Layer.mergeAll(embedderLayer, Llm.layerNone))))

const run = (database: string, settings: () => Parameters<typeof engramWith>[0]) =>
  Effect.gen(function*() {
    for (const count of turnCounts) {
      // Off first, then on, each in a fresh database: neither run finds the other's bank.
      const off = yield* measureWith(count, { ...settings(), anomalyDetection: false })
      const on = yield* measureWith(count, { ...settings(), anomalyDetection: true })
      const rss = process.memoryUsage().rss / 1024 / 1024
      const cost = (on.retainSeconds / off.retainSeconds - 1) * 100
      console.log(
        `| ${database} | ${count} | ${on.embedRate.toFixed(0)} | ${on.retainRate.toFixed(0)} | ` +
          `${on.ratio.toFixed(1)}x | ${rss.toFixed(0)} MB | ${off.retainRate.toFixed(0)} | ${cost.toFixed(1)} % |`
      )
    }
  })

const program = Effect.gen(function*() {
  console.log(
    `retain: synthetic conversation turns, ${batchSize} per call, offline extractor, embedder ` +
      (process.env["ENGRAM_BENCH_EMBEDDER"] === "onnx" ? "onnx stand-in MiniLM-L6" : "glove")
  )
  console.log(
    "| database | turns | embedder items/s (baseline) | retain items/s | retain time vs embedding | RSS at end " +
      "| retain items/s, anomaly detection off | anomaly detection cost |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|")
  yield* run("pglite", () => ({ dataDir: tempDir("engram-bench-") }))
  const url = process.env["ENGRAM_BENCH_DATABASE_URL"]
  if (url !== undefined) {
    yield* run("postgres", () => ({
      dataDir: tempDir("engram-bench-"),
      databaseUrl: Option.some(Redacted.make(url)),
      databaseSchema: tempSchema(url, "bench_retain_")
    }))
  }
})

Effect.runPromise(program).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
