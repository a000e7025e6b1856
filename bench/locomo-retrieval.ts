/**
 * Retrieval quality on the LoCoMo development split (../shared/data/locomo, evaluation use only, read at run
 * time and never copied here): every turn retained offline ("Speaker: text", session date as timestamp, its
 * dia_id in metadata), every question of categories 1–4 with evidence recalled. Reports, at turn and at session
 * granularity, overall and per category: hit@1/5/10 (any evidence among the top k), NDCG@5 (binary relevance) and
 * all@10, for engram and for two baselines computed in the same run over single turns: BM25 (Okapi, k1 1.2, b 0.75)
 * and vector-only (the same GloVe sentence vectors, cosine).
 * Rerun: `node bench/locomo-retrieval.ts [budget] [recency half-life in days]` (default mid, no recency decay).
 * Retaining the conversations is most of a run; for quick experiments on recall, `--bank-dir DIR` keeps the
 * retained banks in DIR and reuses them on the next run (delete DIR after changing anything on the retain side:
 * extraction, embeddings, links). `--misses CATEGORY:N` prints, for N questions of that category whose evidence turn
 * is not in engram's top 10, the question, the evidence turns and engram's top 5 — to read why the evidence ranks low.
 */
import { Effect, Layer } from "effect"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { Banks, Embeddings, engramWith, Llm, Retain } from "../src/index.ts"
import { MemoryUnits } from "../src/memory/MemoryUnits.ts"
import { Recall } from "../src/memory/recall/Recall.ts"
import { loadLocomo, sessionsOf } from "../test/support/Locomo.ts"
import { tempDir } from "./support/ServerProcess.ts"

const args = parseArgs({
  allowPositionals: true,
  options: { "bank-dir": { type: "string" }, misses: { type: "string", multiple: true } }
})
const budget = (args.positionals[0] ?? "mid") as "low" | "mid" | "high"
/** A bank setting (`retention.recency_half_life_days`), to measure what recency decay does to quality. */
const halfLifeDays = Number(args.positionals[1] ?? 0)
const bankDir = args.values["bank-dir"]
/** category → how many of its missed questions to print. */
const missesToShow = new Map((args.values.misses ?? []).map((spec) => {
  const [category, count] = spec.split(":")
  return [Number(category), Number(count ?? 10)] as const
}))
const stopwords = new Set(
  ("a an the and or but if of at by for with about to from in on is are was were be been being do " +
    "does did have has had i you he she it we they me him her us them my your his its our their what which who whom " +
    "this that these those am not no so than too very can will just would should could how when where why").split(" ")
)
const tokens = (text: string) =>
  (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => !stopwords.has(t)).map((t) =>
    t.replace(/(ing|ed|es|s)$/, "")
  )

const bm25 = (documents: ReadonlyArray<string>) => {
  const docs = documents.map(tokens)
  const avg = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, docs.length)
  const df = new Map<string, number>()
  for (const d of docs) for (const t of new Set(d)) df.set(t, (df.get(t) ?? 0) + 1)
  return (query: string) => {
    const q = tokens(query)
    return docs.map((d, index) => {
      let score = 0
      for (const t of q) {
        const tf = d.filter((x) => x === t).length
        if (tf === 0) continue
        const idf = Math.log(1 + (docs.length - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5))
        score += idf * (tf * 2.2) / (tf + 1.2 * (1 - 0.75 + 0.75 * d.length / avg))
      }
      return { index, score }
    }).sort((a, b) => b.score - a.score)
  }
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

const turnsByMemory = (
  response: { readonly results: ReadonlyArray<{ id: string; metadata: Record<string, string> | null }> }
) => response.results.map((r) => [r.id, r.metadata?.["dia_id"] ?? ""] as const)

/** The dia_id of each memory id, looked up for strategy candidates that did not make the final results. */
const diaIds = (bankId: string, ids: ReadonlyArray<string>, known: Map<string, string>) =>
  Effect.gen(function*() {
    const missing = ids.filter((id) => !known.has(id))
    if (missing.length > 0) {
      const units = yield* MemoryUnits
      for (const row of yield* units.byIds(bankId, missing)) known.set(row.id, row.metadata?.["dia_id"] ?? "")
    }
    return ids.map((id) => known.get(id) ?? "")
  })

interface Tally {
  hit1: number
  hit5: number
  hit10: number
  all10: number
  ndcg5: number
  n: number
}
const tally = (): Tally => ({ hit1: 0, hit5: 0, hit10: 0, all10: 0, ndcg5: 0, n: 0 })

/** NDCG@5 with binary relevance: each distinct relevant item counts once, at its first rank. */
const ndcgAt5 = (ranked: ReadonlyArray<string>, relevant: ReadonlySet<string>) => {
  let dcg = 0
  const seen = new Set<string>()
  ranked.slice(0, 5).forEach((id, rank) => {
    if (relevant.has(id) && !seen.has(id)) dcg += 1 / Math.log2(rank + 2)
    seen.add(id)
  })
  let ideal = 0
  for (let rank = 0; rank < Math.min(5, relevant.size); rank++) ideal += 1 / Math.log2(rank + 2)
  return ideal === 0 ? 0 : dcg / ideal
}

const score = (t: Tally, ranked: ReadonlyArray<string>, evidence: ReadonlyArray<string>) => {
  const hitAt = (k: number) => ranked.slice(0, k).some((id) => evidence.includes(id))
  t.n++
  if (hitAt(1)) t.hit1++
  if (hitAt(5)) t.hit5++
  if (hitAt(10)) t.hit10++
  if (evidence.every((id) => ranked.slice(0, 10).includes(id))) t.all10++
  t.ndcg5 += ndcgAt5(ranked, new Set(evidence))
}

/** "D3:5" (session 3, turn 5) → "D3". */
const sessionOf = (diaId: string) => diaId.split(":")[0] ?? diaId
const distinct = (ids: ReadonlyArray<string>) => [...new Set(ids.filter((id) => id !== ""))]

type Granularity = "turn" | "session"
type Method = "engram" | "bm25" | "vector"
const methods: ReadonlyArray<Method> = ["engram", "bm25", "vector"]

/** One tally per method, granularity and category ("all" for every category). */
const tallies = new Map<string, Tally>()
const tallyOf = (method: string, granularity: Granularity, category: string) => {
  const key = `${method}|${granularity}|${category}`
  if (!tallies.has(key)) tallies.set(key, tally())
  return tallies.get(key)!
}

/** Scores one ranked list of turn ids at both granularities, overall and for the question's category. */
const scoreBoth = (
  method: string,
  rankedTurns: ReadonlyArray<string>,
  evidence: ReadonlyArray<string>,
  category: number
) => {
  const rankedSessions = distinct(rankedTurns.map(sessionOf))
  const evidenceSessions = distinct(evidence.map(sessionOf))
  for (const label of ["all", String(category)]) {
    score(tallyOf(method, "turn", label), distinct(rankedTurns), evidence)
    score(tallyOf(method, "session", label), rankedSessions, evidenceSessions)
  }
}

const row = (label: string, t: Tally) =>
  `| ${label} | ${(t.hit1 / t.n).toFixed(3)} | ${(t.hit5 / t.n).toFixed(3)} | ${(t.hit10 / t.n).toFixed(3)} | ` +
  `${(t.ndcg5 / t.n).toFixed(3)} | ${(t.all10 / t.n).toFixed(3)} |`

const program = Effect.gen(function*() {
  const retain = yield* Retain
  const recall = yield* Recall
  const embeddings = yield* Embeddings
  const perStrategy: Record<string, Tally> = {}
  const categories = new Set<number>()
  let recallMs = 0
  for (const sample of loadLocomo()) {
    const bankId = `locomo-${sample.sample_id}`
    const sessions = sessionsOf(sample)
    const turns = sessions.flatMap((session) => session.items)
    // Recall reads the setting, so a reused bank gets it too.
    if (halfLifeDays > 0) yield* (yield* Banks).put(bankId, { retention: { recency_half_life_days: halfLifeDays } })
    // A bank is reused only once it was retained completely (the marker is written last).
    const retained = bankDir === undefined ? undefined : join(bankDir, `${bankId}.retained`)
    if (retained === undefined || !existsSync(retained)) {
      for (const session of sessions) yield* retain.retainNow(bankId, { items: session.items })
      if (retained !== undefined) writeFileSync(retained, new Date().toISOString())
    }
    const textOf = new Map(turns.map((turn) => [turn.metadata.dia_id, turn.content]))
    const keyword = bm25(turns.map((turn) => turn.content))
    const vectors = yield* embeddings.embedDocuments(turns.map((turn) => turn.content))
    for (const qa of sample.qa) {
      if (qa.category > 4 || !qa.evidence || qa.evidence.length === 0) continue
      categories.add(qa.category)
      const evidence = [...qa.evidence]
      const started = performance.now()
      const response = yield* recall.recall(bankId, {
        query: qa.question,
        budget,
        include: { entities: null },
        trace: true
      })
      recallMs += performance.now() - started
      const strategies = (response.trace?.["strategies"] ?? {}) as Record<string, { candidates: Array<{ id: string }> }>
      const diaOf = new Map(turnsByMemory(response))
      for (const [name, run] of Object.entries(strategies)) {
        perStrategy[name] ??= tally()
        const ids = run.candidates.slice(0, 10).map((c) => c.id)
        const dias = yield* diaIds(bankId, ids, diaOf)
        score(perStrategy[name]!, dias, evidence)
      }
      const rankedTurns = response.results.map((r) => r.metadata?.["dia_id"] ?? "")
      scoreBoth("engram", rankedTurns, evidence, qa.category)
      const showing = missesToShow.get(qa.category) ?? 0
      if (showing > 0 && !distinct(rankedTurns).slice(0, 10).some((id) => evidence.includes(id))) {
        missesToShow.set(qa.category, showing - 1)
        console.log(`\nMISS category ${qa.category}: ${qa.question} (answer: ${JSON.stringify(qa.answer)})`)
        for (const id of evidence) console.log(`  evidence ${id}: ${textOf.get(id)}`)
        distinct(rankedTurns).slice(0, 5).forEach((id, rank) => console.log(`  #${rank + 1} ${id}: ${textOf.get(id)}`))
      }
      // Baselines rank more than ten turns so that, folded into sessions, they still fill ten session ranks.
      scoreBoth(
        "bm25",
        keyword(qa.question).slice(0, 50).map((r) => turns[r.index]!.metadata.dia_id),
        evidence,
        qa.category
      )
      const q = yield* embeddings.embedQuery(qa.question)
      const byVector = vectors.map((v, index) => ({ index, s: dot(v, q) })).sort((a, b) => b.s - a.s)
      scoreBoth("vector", byVector.slice(0, 50).map((r) => turns[r.index]!.metadata.dia_id), evidence, qa.category)
    }
  }
  const n = tallyOf("engram", "turn", "all").n
  console.log(
    `locomo-retrieval: ${n} questions (categories 1–4), budget ${budget}, offline (GloVe, no LLM), ` +
      `recency half-life ${halfLifeDays > 0 ? `${halfLifeDays} days` : "off"}`
  )
  for (const granularity of ["turn", "session"] as const) {
    console.log(`\n${granularity} level (a hit is an evidence ${granularity} among the top k)`)
    console.log("| method | hit@1 | hit@5 | hit@10 | NDCG@5 | all@10 |")
    console.log("|---|---:|---:|---:|---:|---:|")
    for (const method of methods) console.log(row(method, tallyOf(method, granularity, "all")))
    for (const category of [...categories].sort()) {
      for (const method of methods) {
        console.log(row(`${method}, category ${category}`, tallyOf(method, granularity, String(category))))
      }
    }
  }
  console.log("\nengram's strategies alone, turn level (top 10 candidates of each)")
  for (const [name, t] of Object.entries(perStrategy)) console.log(row(`engram ${name} only`, t))
  const engram = tallyOf("engram", "turn", "all")
  const baseline = tallyOf("bm25", "turn", "all")
  console.log(
    `\nengram hit@10 − BM25 hit@10 = ${((engram.hit10 - baseline.hit10) / n).toFixed(3)} (turn level); ` +
      `mean recall latency ${(recallMs / n).toFixed(1)} ms`
  )
})

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
// The offline default models, as `npm start` configures them with no variables set (GloVe, word expansion, no LLM).
const models = Layer.mergeAll(
  GloveEmbeddingsLive,
  Llm.layerNone,
  WordVectorsLive
)
if (bankDir !== undefined) mkdirSync(bankDir, { recursive: true })
const dataDir = bankDir ?? tempDir("engram-locomo-")
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
