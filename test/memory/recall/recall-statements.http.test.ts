/**
 * With the bank's brain loaded, a recall reads nothing but the brain: no SQL statement for the default options, for
 * each filter (types, tags and their match modes, tag groups, a time in the query or a query timestamp, budgets, a
 * minimum score, a token budget) and for each include (entities, chunks, source facts) — so a recall never waits
 * behind another bank's work on the database. A recall right after an acknowledged retain sees that retain. Each
 * answer is sent as recall built it, without the schema encoding it again (`src/http/JsonAsIs.ts`), so each is also
 * checked to be exactly what that encoding gives: no field outside `RecallResponse`, none missing, every value valid.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { RecallResponse } from "../../../src/domain/Recall.ts"
import { bankPath, settled } from "../../support/HttpCalls.ts"
import { probe, recordStatements } from "../../support/StatementProbe.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "recall-statements"
const base = bankPath(bank)

const items = [
  ...[
    "Alice Novak works at Acme Corp as a data engineer.",
    "Bob Stone painted the lake at sunrise with Alice Novak.",
    "Alice Novak adopted a rescue dog called Biscuit.",
    "Bob Stone is training for the Lisbon marathon.",
    "Carla Diaz moved to Oslo to study marine biology.",
    "Carla Diaz and Bob Stone cooked a vegetarian lasagna."
  ].map((content, n) => ({
    content,
    timestamp: new Date(Date.UTC(2024, 2, 1 + n)).toISOString(),
    tags: n % 2 === 0 ? ["work"] : ["home"]
  })),
  {
    content: "Alice Novak no longer works at Acme Corp; she resigned in April.",
    timestamp: new Date(Date.UTC(2024, 3, 20)).toISOString(),
    tags: ["work"]
  },
  {
    content:
      "The quarterly report says revenue grew in the northern region. Bob Stone presented the report to the board.",
    document_id: "report-q1",
    timestamp: new Date(Date.UTC(2024, 3, 2)).toISOString()
  }
]

/** What the endpoint's schema would have sent for this body: decoded and encoded again, extra keys dropped. */
const encodedAgain = (body: unknown) =>
  Schema.encodeUnknownSync(RecallResponse)(
    Schema.decodeUnknownSync(RecallResponse)(body, { onExcessProperty: "ignore" })
  )

const requests: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["defaults", {}],
  ["budget low", { budget: "low" }],
  ["budget high", { budget: "high" }],
  ["observations", { types: ["observation"] }],
  ["every type", { types: ["world", "experience", "observation", "opinion"] }],
  ["prefer observations", { prefer_observations: true }],
  ["tags any", { tags: ["work"] }],
  ["tags all", { tags: ["work", "home"], tags_match: "all" }],
  ["tags any strict", { tags: ["home"], tags_match: "any_strict" }],
  ["tags all strict", { tags: ["work"], tags_match: "all_strict" }],
  ["tag groups", { tag_groups: [{ or: [{ tags: ["work"], match: "any_strict" }, { not: { tags: ["home"] } }] }] }],
  ["query timestamp", { query_timestamp: "2024-03-03T12:00:00Z" }],
  ["minimum score", { min_score: { threshold: 0.2 } }],
  ["token budget", { max_tokens: 40 }],
  ["trace", { trace: true }],
  ["include entities", { include: { entities: { max_tokens: 800 } } }],
  ["no entities", { include: { entities: null } }],
  ["include chunks", { include: { chunks: { max_tokens: 800 } } }],
  ["include source facts", { include: { source_facts: { max_tokens: -1 } } }]
]

layer(Layer.provide(testApp({ enableObservations: true }), recordStatements), { excludeTestServices: true })(
  "recall statements",
  (it) => {
    it.effect(
      "with the brain loaded, recall runs no statement, for every filter and include",
      () =>
        Effect.gen(function*() {
          const server = yield* TestServer
          const retained = yield* server.request("POST", `${base}/memories`, { json: { items } })
          assert.strictEqual(retained.status, 200, retained.text)
          yield* settled(bank)
          // The first recall builds the brain (from SQL); every later one reads it alone.
          const warm = yield* probe("POST", `${base}/memories/recall`, { query: "Where does Alice work?" })
          assert.strictEqual(warm.response.status, 200, warm.response.text)
          for (const [name, options] of requests) {
            for (
              const query of ["Where does Alice Novak work?", "What did Bob do in March 2024?", "lake sunrise painting"]
            ) {
              const recalled = yield* probe("POST", `${base}/memories/recall`, { query, ...options })
              assert.strictEqual(recalled.response.status, 200, `${name}: ${recalled.response.text}`)
              assert.deepStrictEqual(recalled.response.body, encodedAgain(recalled.response.body), name)
              assert.deepStrictEqual(
                recalled.statements.map((statement) => statement.sql),
                [],
                `${name}, "${query}"`
              )
            }
          }
          // The includes and filters found what they are about, so the absence of statements is not an empty answer.
          const named = (yield* probe("POST", `${base}/memories/recall`, {
            query: "Alice Novak",
            include: { entities: { max_tokens: 2000 }, chunks: { max_tokens: 2000 }, source_facts: { max_tokens: -1 } },
            types: ["world", "experience", "observation"]
          })).body
          assert.isAbove(named.results.length, 0)
          assert.property(named.entities, "Alice Novak")
          assert.isTrue(
            named.results.some((result: any) => result.type === "observation"),
            JSON.stringify(named.results)
          )
          assert.isAbove(Object.keys(named.source_facts).length, 0)
          const report = (yield* probe("POST", `${base}/memories/recall`, {
            query: "quarterly report revenue",
            include: { chunks: { max_tokens: 2000 } }
          })).body
          assert.isTrue(Object.values(report.chunks).some((chunk: any) => chunk.text.includes("northern region")))
          const strict = (yield* probe("POST", `${base}/memories/recall`, {
            query: "Bob",
            tags: ["home"],
            tags_match: "any_strict"
          }))
            .body
          assert.isAbove(strict.results.length, 0)
          for (const result of strict.results) assert.include(result.tags, "home")
        }),
      { timeout: 120_000 }
    )

    it.effect("a recall right after an acknowledged retain finds what was retained", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const other = bankPath("recall-after-retain")
        const first = yield* server.request("POST", `${other}/memories`, { json: { items: items.slice(0, 3) } })
        assert.strictEqual(first.status, 200, first.text)
        assert.strictEqual(
          (yield* server.request("POST", `${other}/memories/recall`, { json: { query: "Alice" } })).status,
          200
        )
        for (let n = 0; n < 5; n++) {
          const content = `Dmitri Petrov opened bakery number ${n} in Tallinn.`
          const retained = yield* server.request("POST", `${other}/memories`, { json: { items: [{ content }] } })
          assert.strictEqual(retained.status, 200, retained.text)
          const recalled = yield* server.request("POST", `${other}/memories/recall`, {
            json: { query: `Dmitri bakery number ${n} Tallinn` }
          })
          assert.isTrue(
            recalled.body.results.some((result: any) => result.text.includes(`bakery number ${n}`)),
            JSON.stringify(recalled.body)
          )
        }
      }))
  }
)
