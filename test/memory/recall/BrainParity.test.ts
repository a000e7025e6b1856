/**
 * A recall from the bank's brain answers exactly as the same recall from SQL, on the real database tier: random banks
 * (retains with tags, times and documents, document replacements and deletions, memory deletions, contradictions
 * that supersede older facts, observations from consolidation, memories that expire later or have expired without
 * being swept yet; every other bank with recency decay) and random requests (fact types, tags and their match
 * modes, tag groups, query times, budgets, includes). Nearest neighbours are exact on both sides (pgvector scans
 * instead of its HNSW index), so the same memories must come back in the same order — up to the order of results
 * whose scores differ only by float rounding (pgvector sums in float32, the brain in float64).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { SqlClient } from "effect/sql"
import type { RecallRequest, RecallResponse } from "../../../src/domain/Recall.ts"
import { GraphRecall } from "../../../src/memory/recall/GraphRecall.ts"
import { Recall } from "../../../src/memory/recall/Recall.ts"
import { bankPath, settled } from "../../support/HttpCalls.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dmitri Petrov"]
const places = ["Acme Corp", "Globex", "Initech", "Lisbon", "Oslo"]
const activities = [
  "painted the lake at sunrise",
  "trained for a marathon",
  "adopted a rescue dog",
  "cooked a lasagna",
  "moved to a new flat",
  "started a pottery class",
  "read a novel about sailing",
  "fixed an old bicycle"
]
const tags = ["work", "home", "travel"]

type Operation =
  | {
    readonly kind: "retain"
    readonly items: ReadonlyArray<
      { person: number; place: number; activity: number; day: number; tags: ReadonlyArray<number> }
    >
    readonly document: number | null
  }
  | { readonly kind: "contradict"; readonly person: number; readonly place: number; readonly day: number }
  | { readonly kind: "delete-memory"; readonly pick: number }
  | { readonly kind: "delete-document"; readonly document: number }
  | { readonly kind: "expire"; readonly pick: number; readonly past: boolean }

const item = fc.record({
  person: fc.nat({ max: people.length - 1 }),
  place: fc.nat({ max: places.length - 1 }),
  activity: fc.nat({ max: activities.length - 1 }),
  day: fc.nat({ max: 400 }),
  tags: fc.uniqueArray(fc.nat({ max: tags.length - 1 }), { maxLength: 2 })
})

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("retain" as const),
      items: fc.array(item, { minLength: 1, maxLength: 4 }),
      document: fc.option(fc.nat({ max: 2 }), { nil: null })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("contradict" as const),
      person: fc.nat({ max: people.length - 1 }),
      place: fc.nat({ max: places.length - 1 }),
      day: fc.nat({ max: 400 })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete-memory" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete-document" as const), document: fc.nat({ max: 2 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("expire" as const), pick: fc.nat(), past: fc.boolean() }) }
)

const tagsMatch = fc.constantFrom("any", "all", "any_strict", "all_strict")
const request: fc.Arbitrary<RecallRequest> = fc.record({
  query: fc.constantFrom(
    "Where does Alice Novak work?",
    "What did Bob do at the lake?",
    "Who adopted a dog?",
    "pottery class in Oslo",
    "What happened in March 2024?",
    "marathon training last week",
    "Globex"
  ),
  budget: fc.constantFrom("low", "mid", "high"),
  types: fc.option(fc.uniqueArray(fc.constantFrom("world", "experience", "observation"), { minLength: 1 }), {
    nil: undefined
  }),
  tags: fc.option(fc.uniqueArray(fc.constantFrom(...tags), { minLength: 1, maxLength: 2 }), { nil: undefined }),
  tags_match: tagsMatch,
  query_timestamp: fc.option(
    fc.integer({ min: 0, max: 400 }).map((day) => new Date(Date.UTC(2024, 0, 1 + day)).toISOString()),
    { nil: undefined }
  ),
  prefer_observations: fc.boolean(),
  include: fc.constant({
    entities: { max_tokens: 600 },
    chunks: { max_tokens: 600 },
    source_facts: { max_tokens: 600 }
  })
}, { requiredKeys: ["query"] }) as fc.Arbitrary<RecallRequest>

const groupRequest: fc.Arbitrary<RecallRequest> = fc.record({
  query: fc.constantFrom("Where does Carla work?", "Who moved to a new flat?"),
  tag_groups: fc.constant([{ or: [{ tags: ["work"], match: "any_strict" as const }, { not: { tags: ["home"] } }] }])
})

/** Ranked ids as runs of scores equal up to float rounding: each run's ids as a sorted set, in rank order. */
const runsOf = (ranked: ReadonlyArray<{ readonly id: string; readonly score?: number | undefined }>) => {
  const runs: Array<{ score: number; ids: Array<string> }> = []
  for (const item of ranked) {
    const last = runs.at(-1)
    if (last !== undefined && Math.abs(last.score - (item.score ?? 0)) <= 2e-4) last.ids.push(item.id)
    else runs.push({ score: item.score ?? 0, ids: [item.id] })
  }
  return runs.map((run) => run.ids.sort())
}

const ranked = (response: RecallResponse) => runsOf(response.results)

let bankNumber = 0
let compared = 0
let nearTies = 0

layer(testApp({ enableObservations: true }), { excludeTestServices: true })(
  "recall from the brain against SQL",
  (it) => {
    it.effect("answers exactly as SQL, after any writes, for any request", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const recall = yield* Recall
        const sql = yield* SqlClient.SqlClient
        const graph = yield* GraphRecall
        const context = yield* Effect.context<TestServer | Recall | SqlClient.SqlClient>()

        const scenario = (ops: ReadonlyArray<Operation>, requests: ReadonlyArray<RecallRequest>) =>
          Effect.gen(function*() {
            const bank = `parity-${bankNumber++}`
            const base = bankPath(bank)
            // Every other bank decays recall scores by recency (a month's half-life: the memories span weeks).
            const settings = bankNumber % 2 === 0 ? { retention: { recency_half_life_days: 30 } } : {}
            assert.strictEqual((yield* server.request("PUT", base, { json: settings })).status, 200)
            for (const op of ops) {
              if (op.kind === "retain") {
                const items = op.items.map((it, n) => ({
                  content: `${people[it.person]} ${activities[it.activity]} near ${places[it.place]}.`,
                  timestamp: new Date(Date.UTC(2024, 0, 1 + it.day, n)).toISOString(),
                  tags: it.tags.map((t) => tags[t]!),
                  ...(op.document === null ? {} : { document_id: `doc-${op.document}`, update_mode: "replace" })
                }))
                const retained = yield* server.request("POST", `${base}/memories`, { json: { items } })
                assert.strictEqual(retained.status, 200, retained.text)
              } else if (op.kind === "contradict") {
                for (
                  const [offset, content] of [
                    [0, `${people[op.person]} works at ${places[op.place]} as an engineer.`],
                    [30, `${people[op.person]} no longer works at ${places[op.place]}; they resigned.`]
                  ] as const
                ) {
                  const retained = yield* server.request("POST", `${base}/memories`, {
                    json: {
                      items: [{ content, timestamp: new Date(Date.UTC(2024, 0, 1 + op.day + offset)).toISOString() }]
                    }
                  })
                  assert.strictEqual(retained.status, 200, retained.text)
                }
              } else if (op.kind === "delete-memory") {
                const ids = yield* sql<
                  { id: string }
                >`SELECT id FROM memory_units WHERE bank_id = ${bank} AND fact_type <> 'observation' ORDER BY seq`
                if (ids.length > 0) yield* server.request("DELETE", `${base}/memories/${ids[op.pick % ids.length]!.id}`)
              } else if (op.kind === "expire") {
                // Set in the table, as time passing would make it: nothing wakes the expiry scheduler, so no sweep
                // deletes the expired memory while the two paths are compared; the brain reads it from the change log.
                const ids = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} ORDER BY seq`
                if (ids.length > 0) {
                  const id = ids[op.pick % ids.length]!.id
                  yield* op.past
                    ? sql`UPDATE memory_units SET expires_at = now() - interval '1 minute' WHERE id = ${id}`
                    : sql`UPDATE memory_units SET expires_at = now() + interval '1 day' WHERE id = ${id}`
                  yield* graph.changed(bank)
                }
              } else {
                yield* server.request("DELETE", `${base}/documents/doc-${op.document}`)
              }
            }
            yield* settled(bank)
            for (const asked of requests) {
              const traced = { ...asked, trace: true }
              const fromBrain = yield* recall.recallWith(bank, traced, {}).pipe(Effect.orDie)
              const fromSql = yield* recall.recallWith(bank, traced, { source: "sql", exactVectors: true }).pipe(
                Effect.orDie
              )
              const label = JSON.stringify({ ops, asked })
              // Each strategy's candidates first: a difference is easier to read there than in the fused result.
              const runs = (response: RecallResponse) =>
                response.trace!["strategies"] as Record<string, { candidates: Array<{ id: string; score: number }> }>
              const direct = ["semantic", "keyword", "temporal"] as const
              for (const name of direct) {
                assert.deepStrictEqual(
                  runsOf(runs(fromBrain)[name]?.candidates ?? []),
                  runsOf(runs(fromSql)[name]?.candidates ?? []),
                  `${name}: ${label}`
                )
              }
              // Two memories whose similarities differ by less than float rounding may come in either order, and then
              // the graph's seeds, and everything after, differ. Only then is the rest not compared (and counted).
              const order = (response: RecallResponse) =>
                direct.map((name) => (runs(response)[name]?.candidates ?? []).map((c) => c.id))
              compared++
              if (JSON.stringify(order(fromBrain)) !== JSON.stringify(order(fromSql))) {
                nearTies++
                continue
              }
              assert.deepStrictEqual(
                runsOf(runs(fromBrain)["graph"]?.candidates ?? []),
                runsOf(runs(fromSql)["graph"]?.candidates ?? []),
                `graph: ${label}`
              )
              assert.deepStrictEqual(ranked(fromBrain), ranked(fromSql), label)
              const byId = new Map(fromSql.results.map((result) => [result.id, result]))
              for (const result of fromBrain.results) {
                // Scores are the strategies' raw similarities: float32 in the brain, pgvector's arithmetic in SQL, so
                // they agree to rounding only (their order is compared above).
                const { score: _a, scores: brainScores, ...brainFields } = result
                const { score: _b, scores: sqlScores, ...sqlFields } = byId.get(result.id)!
                assert.deepStrictEqual(brainFields, sqlFields, label)
                for (const key of ["final", "semantic", "keyword", "reranker"] as const) {
                  const [brain, sql] = [brainScores?.[key] ?? null, sqlScores?.[key] ?? null]
                  if (brain === null || sql === null) assert.strictEqual(brain, sql, `scores.${key}: ${label}`)
                  else assert.closeTo(brain, sql, 1e-3, `scores.${key}: ${label}`)
                }
              }
              assert.deepStrictEqual(fromBrain.chunks, fromSql.chunks, label)
              assert.deepStrictEqual(fromBrain.source_facts, fromSql.source_facts, label)
              assert.deepStrictEqual(
                Object.keys(fromBrain.entities ?? {}).sort(),
                Object.keys(fromSql.entities ?? {}).sort(),
                label
              )
            }
          })

        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(operation, { minLength: 2, maxLength: 10 }),
              fc.array(fc.oneof({ weight: 5, arbitrary: request }, { weight: 1, arbitrary: groupRequest }), {
                minLength: 4,
                maxLength: 8
              }),
              (ops, requests) => Effect.runPromiseWith(context)(scenario(ops, requests).pipe(Effect.orDie))
            ),
            { numRuns: 25, endOnFailure: true }
          )
        )
        assert.isAtMost(nearTies, compared / 5, `${nearTies} of ${compared} requests met a near-tie`)
      }), 300_000)
  }
)
