/**
 * Recall latency on synthetic banks of 10k and 100k memories (templated conversation facts embedded with the
 * offline GloVe model, so embeddings cluster by topic; 40 people as entities; temporal links between
 * neighbouring facts, entity links between recent facts of the same person), through the library, no HTTP.
 * Baseline measured in the same run: one top-10 HNSW vector query on the same bank. Reports p50/p95 for each
 * budget and for each strategy alone, as ratios to the baseline. Target: recall at budget `mid` within 8× of
 * the baseline at 100k memories, p95 included. Rerun: `node bench/recall.ts [sizes...]` (default 10000 100000).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { param } from "../layers/storage/PgVector.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { Banks, Embeddings, engramWith, Llm } from "../src/index.ts"
import { Recall } from "../src/memory/recall/Recall.ts"
import { BankBrains } from "../src/brain/BankBrains.ts"
import { GraphRecall } from "../src/memory/recall/GraphRecall.ts"
import { corpusStatistics, keyword, semantic } from "../src/memory/recall/Strategies.ts"
import { modelKey } from "../src/memory/Reembedding.ts"
import { contentHash } from "../src/memory/retain/ContentHash.ts"
import { cjkTerms } from "../src/memory/recall/SearchTerms.ts"
import { keywordInMemory } from "../src/memory/recall/keyword/KeywordSearch.ts"
import { tempDir } from "./support/ServerProcess.ts"

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const bankSizes = sizes.length > 0 ? sizes : [10_000, 100_000]
const queriesPerCase = 60

const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}
const people = Array.from(
  { length: 40 },
  (_, i) =>
    ["Ava", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gia", "Hugo", "Ivy", "Jon"][i % 10]! +
    " " + ["Smith", "Lee", "Park", "Diaz"][Math.floor(i / 10)]!
)
const topics = [
  ["painted", "a watercolor of the lake", "art class"],
  ["ran", "a half marathon", "training"],
  ["cooked", "a vegetarian lasagna", "dinner party"],
  ["adopted", "a rescue dog", "the shelter"],
  ["visited", "the science museum", "a school trip"],
  ["started", "a pottery course", "the community center"],
  ["planted", "tomatoes in the garden", "spring"],
  ["read", "a novel about sailing", "the book club"],
  ["fixed", "an old bicycle", "the weekend"],
  ["learned", "to play the guitar", "online lessons"]
]

const sentence = (n: number, next: () => number) => {
  const topic = topics[Math.floor(next() * topics.length)]!
  const person = people[Math.floor(next() * people.length)]!
  return { text: `${person} ${topic[0]} ${topic[1]} during ${topic[2]} (entry ${n}).`, person }
}

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}

const time = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* effect
    return performance.now() - start
  })

const seed = Effect.fn(function*(bankId: string, count: number) {
  const sql = yield* SqlClient.SqlClient
  const embeddings = yield* Embeddings
  const banks = yield* Banks
  yield* banks.ensure(bankId)
  const next = random(count)
  const entityIds = new Map<string, string>()
  for (const person of people) {
    const id = crypto.randomUUID()
    entityIds.set(person, id)
    yield* sql`INSERT INTO entities (id, bank_id, canonical_name, entity_type) VALUES (${id}, ${bankId}, ${person}, 'person')`
  }
  const model = modelKey(embeddings.identity)
  for (let offset = 0; offset < count; offset += 2000) {
    const batch = Array.from({ length: Math.min(2000, count - offset) }, (_, i) => sentence(offset + i, next))
    const vectors = yield* embeddings.embedDocuments(batch.map((b) => b.text))
    const rows = batch.map((b, i) => ({
      id: crypto.randomUUID(),
      text: b.text,
      fact_type: i % 3 === 0 ? "experience" : "world",
      mentioned_at: new Date(Date.UTC(2023, 0, 1) + Math.floor((offset + i) / 50) * 86_400_000).toISOString(),
      content_hash: contentHash(b.text),
      embedding: param(vectors[i]!),
      cjk: cjkTerms(b.text),
      entity_id: entityIds.get(b.person)!,
      // Each memory is tagged with its person, as an app keeping one user's memories apart would tag them.
      tag: `user:${b.person}`
    }))
    yield* sql`
      INSERT INTO memory_units (id, bank_id, text, fact_type, mentioned_at, content_hash, embedding, embedding_model, search_text, tags)
      SELECT x.id, ${bankId}, x.text, x.fact_type, x.mentioned_at, x.content_hash, x.embedding::vector, ${model},
        to_tsvector('english', x.text) || to_tsvector('simple', x.cjk), ARRAY[x.tag]
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS x(id text, text text, fact_type text,
        mentioned_at timestamptz, content_hash text, embedding text, cjk text, tag text)`
    yield* sql`
      INSERT INTO unit_entities (unit_id, entity_id, unit_seq)
      SELECT x.id, x.entity_id, u.seq FROM jsonb_to_recordset(${
      JSON.stringify(rows)
    }::jsonb) AS x(id text, entity_id text)
      JOIN memory_units u ON u.id = x.id`
  }
  // Links: each memory to its two predecessors in time, and to the last three memories of the same person.
  yield* sql`
    INSERT INTO memory_links (bank_id, from_id, to_id, link_type, weight)
    SELECT ${bankId}, u.id, p.id, 'temporal', 1.0 / d
    FROM (SELECT id, seq, lag(id, 1) OVER w AS p1, lag(id, 2) OVER w AS p2 FROM memory_units
          WHERE bank_id = ${bankId} WINDOW w AS (ORDER BY seq)) u
    CROSS JOIN LATERAL (VALUES (u.p1, 1), (u.p2, 2)) AS p(id, d)
    WHERE p.id IS NOT NULL ON CONFLICT DO NOTHING`
  yield* sql`
    INSERT INTO memory_links (bank_id, from_id, to_id, link_type, weight)
    SELECT ${bankId}, x.unit_id, x.prev, 'entity', 1
    FROM (SELECT ue.unit_id, lag(ue.unit_id, k) OVER (PARTITION BY ue.entity_id ORDER BY ue.unit_seq) AS prev
          FROM unit_entities ue JOIN entities e ON e.id = ue.entity_id, generate_series(1, 3) AS k
          WHERE e.bank_id = ${bankId}) x
    WHERE x.prev IS NOT NULL ON CONFLICT DO NOTHING`
  yield* sql`ANALYZE memory_units, memory_links, unit_entities, entities`
})

const measure = Effect.fn(function*(bankId: string, count: number) {
  const sql = yield* SqlClient.SqlClient
  const brains = yield* BankBrains
  const recall = yield* Recall
  const graph = yield* GraphRecall
  const embeddings = yield* Embeddings
  const next = random(7)
  const queries = Array.from({ length: queriesPerCase }, (_, n) => {
    const s = sentence(n, next)
    return `What did ${s.person.split(" ")[0]} do during ${s.text.split(" during ")[1]!.split(" (")[0]}?`
  })
  const scope = sql.and([sql`u.bank_id = ${bankId}`, sql`u.fact_type IN ${sql.in(["world", "experience"])}`])
  const d = embeddings.identity.dimensions
  const model = modelKey(embeddings.identity)
  // Warm-up: builds the brain and fills caches, as a live bank would have them, and waits for its vector index.
  for (const query of queries.slice(0, 5)) yield* recall.recall(bankId, { query })
  const indexing = performance.now()
  while ((yield* brains.state(bankId)).vectorIndex === "building") yield* Effect.sleep("100 millis")
  console.error(
    `vector index of ${count}: ${(yield* brains.state(bankId)).vectorIndex} after ${
      ((performance.now() - indexing) / 1000).toFixed(1)
    } s`
  )
  const rows: Array<[string, Array<number>]> = []
  const run = (
    name: string,
    make: (query: string) => Effect.Effect<unknown, unknown, SqlClient.SqlClient | BankBrains>
  ) =>
    Effect.gen(function*() {
      const samples: Array<number> = []
      for (const query of queries) {
        samples.push(
          yield* time(
            make(query).pipe(
              Effect.provideService(SqlClient.SqlClient, sql),
              Effect.provideService(BankBrains, brains)
            )
          )
        )
      }
      rows.push([name, samples])
    })
  yield* run(
    "baseline: one top-10 vector query",
    (query) =>
      Effect.flatMap(
        embeddings.embedQuery(query),
        (vector) => semantic({ scope, vector, dimensions: d, model, depth: 10 })
      ).pipe(Effect.orDie)
  )
  for (const budget of ["low", "mid", "high"] as const) {
    yield* run(`recall budget ${budget}`, (query) => recall.recall(bankId, { query, budget }).pipe(Effect.orDie))
  }
  // Scoped to one person's tag, the way a multi-user app recalls: every strategy applies the tag rules.
  yield* run(
    "recall budget mid, tags [user:…] any_strict",
    (query) =>
      recall.recall(bankId, {
        query,
        budget: "mid",
        tags: [`user:${people[query.length % people.length]!}`],
        tags_match: "any_strict"
      })
        .pipe(Effect.orDie)
  )
  yield* run(
    "semantic only (mid depth)",
    (query) =>
      Effect.flatMap(
        embeddings.embedQuery(query),
        (vector) => semantic({ scope, vector, dimensions: d, model, depth: 50 })
      ).pipe(Effect.orDie)
  )
  const corpus = yield* corpusStatistics(bankId)
  yield* run(
    "keyword only, in-memory index (mid depth)",
    (query) =>
      keywordInMemory({ bankId, query, expansion: [], types: ["world", "experience"], depth: 50, sqlScope: scope })
  )
  yield* run(
    "keyword only, SQL strategy (reference; mid depth)",
    (query) => keyword({ scope, bankId, query, depth: 50, corpus }).pipe(Effect.orDie)
  )
  const seeds = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId} ORDER BY seq LIMIT 8`
  yield* run(
    "graph only (8 seeds)",
    () => graph.expand(bankId, seeds.map((s) => ({ id: s.id, activation: 1 })), { depth: 50, temporalOnly: false })
  )
  // Where the slowest mid recalls spend their time, from recall's own trace (set ENGRAM_BENCH_TAGGED=1 to trace the
  // tag-scoped ones instead).
  const traced: Array<{ query: string; total: number; wall: number; stages: string }> = []
  const stageSamples = new Map<string, Array<number>>()
  const tagged = process.env["ENGRAM_BENCH_TAGGED"] === "1"
  for (const query of queries) {
    const start = performance.now()
    const scope = tagged
      ? { tags: [`user:${people[query.length % people.length]!}`], tags_match: "any_strict" as const }
      : {}
    const response = yield* recall.recall(bankId, { query, budget: "mid", trace: true, ...scope }).pipe(Effect.orDie)
    const trace = response.trace as {
      total_ms: number
      strategies: Record<string, { duration_ms: number }>
      stages_ms: Record<string, number>
    }
    for (const [name, ms] of Object.entries(trace.stages_ms)) {
      stageSamples.set(name, [...(stageSamples.get(name) ?? []), ms])
    }
    traced.push({
      query,
      total: trace.total_ms,
      wall: performance.now() - start,
      stages: [
        ...Object.entries(trace.strategies).map(([name, run]) => `${name} ${run.duration_ms} ms`),
        ...Object.entries(trace.stages_ms).map(([name, ms]) => `${name} ${ms} ms`)
      ].join(", ")
    })
  }
  console.error(
    `mid recall stages, p50 ms: ${
      [...stageSamples].map(([name, samples]) => `${name} ${percentile(samples, 0.5).toFixed(2)}`).join(", ")
    }`
  )
  for (const slow of traced.sort((a, b) => b.wall - a.wall).slice(0, 3)) {
    console.error(
      `slow mid recall (${slow.wall.toFixed(1)} ms wall, ${slow.total} ms traced): ${slow.stages} — "${slow.query}"`
    )
  }
  const base = rows[0]![1]
  const baseP50 = percentile(base, 0.5)
  const baseP95 = percentile(base, 0.95)
  for (const [name, samples] of rows) {
    const p50 = percentile(samples, 0.5)
    const p95 = percentile(samples, 0.95)
    console.log(
      `| ${count} | ${name} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${(p50 / baseP50).toFixed(1)}x | ${
        (p95 / baseP95).toFixed(1)
      }x |`
    )
  }
}, (effect) => Effect.orDie(effect))

const program = Effect.gen(function*() {
  console.log(`recall: synthetic banks, ${queriesPerCase} queries per row, PGlite, offline GloVe; ms`)
  console.log("| memories | what | p50 | p95 | p50 vs baseline | p95 vs baseline |")
  console.log("|---:|---|---:|---:|---:|---:|")
  for (const count of bankSizes) {
    const bankId = `bench-${count}`
    const started = performance.now()
    yield* seed(bankId, count)
    console.error(`seeded ${count} memories in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    yield* measure(bankId, count)
  }
})

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
const models = Layer.mergeAll(GloveEmbeddingsLive, Llm.layerNone, WordVectorsLive)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir: tempDir("engram-recall-") }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
