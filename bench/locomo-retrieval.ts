/**
 * Retrieval quality on the LoCoMo development split (../shared/data/locomo, evaluation use only, read at run
 * time and never copied here): every turn retained offline ("Speaker: text", session date as timestamp, its
 * dia_id in metadata), every question of categories 1–4 with evidence recalled. Reports hit@1/5/10 (any
 * evidence turn among the top k) and all@10 for engram, and for two baselines computed in the same run over
 * single turns: BM25 (Okapi, k1 1.2, b 0.75) and vector-only (the same GloVe sentence vectors, cosine).
 * Rerun: `node bench/locomo-retrieval.ts [budget]` (default mid).
 */
import { Effect, Layer } from "effect"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GloveEmbeddingsLive } from "../layers/models/embeddings/EmbeddingsLive.ts"
import { WordVectorsLive } from "../layers/models/WordVectorsLive.ts"
import { engramWith, Embeddings, Llm, Retain } from "../src/index.ts"
import { MemoryUnits } from "../src/memory/MemoryUnits.ts"
import { Recall } from "../src/memory/recall/Recall.ts"
import { loadLocomo, sessionsOf } from "../test/support/Locomo.ts"
import { tempDir } from "./support/ServerProcess.ts"

const budget = (process.argv[2] ?? "mid") as "low" | "mid" | "high"
const stopwords = new Set(("a an the and or but if of at by for with about to from in on is are was were be been being do " +
  "does did have has had i you he she it we they me him her us them my your his its our their what which who whom " +
  "this that these those am not no so than too very can will just would should could how when where why").split(" "))
const tokens = (text: string) =>
  (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => !stopwords.has(t)).map((t) => t.replace(/(ing|ed|es|s)$/, ""))

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

const turnsByMemory = (response: { readonly results: ReadonlyArray<{ id: string; metadata: Record<string, string> | null }> }) =>
  response.results.map((r) => [r.id, r.metadata?.["dia_id"] ?? ""] as const)

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

interface Tally { hit1: number; hit5: number; hit10: number; all10: number; n: number }
const tally = (): Tally => ({ hit1: 0, hit5: 0, hit10: 0, all10: 0, n: 0 })
const score = (t: Tally, ranked: ReadonlyArray<string>, evidence: ReadonlyArray<string>) => {
  const hitAt = (k: number) => ranked.slice(0, k).some((id) => evidence.includes(id))
  t.n++
  if (hitAt(1)) t.hit1++
  if (hitAt(5)) t.hit5++
  if (hitAt(10)) t.hit10++
  if (evidence.every((id) => ranked.slice(0, 10).includes(id))) t.all10++
}

const program = Effect.gen(function*() {
  const retain = yield* Retain
  const recall = yield* Recall
  const embeddings = yield* Embeddings
  const results = { engram: tally(), bm25: tally(), vector: tally() }
  const perStrategy: Record<string, Tally> = {}
  let recallMs = 0
  for (const sample of loadLocomo()) {
    const bankId = `locomo-${sample.sample_id}`
    const sessions = sessionsOf(sample)
    const turns = sessions.flatMap((session) => session.items)
    for (const session of sessions) yield* retain.retainNow(bankId, { items: session.items })
    const keyword = bm25(turns.map((turn) => turn.content))
    const vectors = yield* embeddings.embedDocuments(turns.map((turn) => turn.content))
    for (const qa of sample.qa) {
      if (qa.category > 4 || !qa.evidence || qa.evidence.length === 0) continue
      const evidence = [...qa.evidence]
      const started = performance.now()
      const response = yield* recall.recall(bankId, { query: qa.question, budget, include: { entities: null }, trace: true })
      recallMs += performance.now() - started
      const strategies = (response.trace?.["strategies"] ?? {}) as Record<string, { candidates: Array<{ id: string }> }>
      const diaOf = new Map(turnsByMemory(response))
      for (const [name, run] of Object.entries(strategies)) {
        perStrategy[name] ??= tally()
        const ids = run.candidates.slice(0, 10).map((c) => c.id)
        const dias = yield* diaIds(bankId, ids, diaOf)
        score(perStrategy[name]!, dias, evidence)
      }
      score(results.engram, [...new Set(response.results.map((r) => r.metadata?.["dia_id"] ?? ""))], evidence)
      score(results.bm25, keyword(qa.question).slice(0, 10).map((r) => turns[r.index]!.metadata.dia_id), evidence)
      const q = yield* embeddings.embedQuery(qa.question)
      const byVector = vectors.map((v, index) => ({ index, s: dot(v, q) })).sort((a, b) => b.s - a.s)
      score(results.vector, byVector.slice(0, 10).map((r) => turns[r.index]!.metadata.dia_id), evidence)
    }
  }
  const n = results.engram.n
  console.log(`locomo-retrieval: ${n} questions (categories 1–4), budget ${budget}, offline (GloVe, no LLM)`)
  console.log("| method | hit@1 | hit@5 | hit@10 | all@10 |")
  console.log("|---|---:|---:|---:|---:|")
  for (const [name, t] of Object.entries(results)) {
    console.log(`| ${name} | ${(t.hit1 / t.n).toFixed(3)} | ${(t.hit5 / t.n).toFixed(3)} | ${(t.hit10 / t.n).toFixed(3)} | ${(t.all10 / t.n).toFixed(3)} |`)
  }
  for (const [name, t] of Object.entries(perStrategy)) {
    console.log(`| engram ${name} only (top 10 candidates) | ${(t.hit1 / t.n).toFixed(3)} | ${(t.hit5 / t.n).toFixed(3)} | ${(t.hit10 / t.n).toFixed(3)} | ${(t.all10 / t.n).toFixed(3)} |`)
  }
  console.log(`engram hit@10 − BM25 hit@10 = ${((results.engram.hit10 - results.bm25.hit10) / n).toFixed(3)} (target ≥ 0.08); ` +
    `mean recall latency ${(recallMs / n).toFixed(1)} ms`)
})

process.env["SERVICE_API_EMBEDDINGS_CACHE_DIR"] ??= join(tmpdir(), "engram-glove-cache", "models")
// The offline default models, as `npm start` configures them with no variables set (GloVe, word expansion, no LLM).
const models = Layer.mergeAll(
  GloveEmbeddingsLive,
  Llm.layerNone,
  WordVectorsLive
)
Effect.runPromise(program.pipe(Effect.provide(engramWith({ dataDir: tempDir("engram-locomo-") }, models))))
  .then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
