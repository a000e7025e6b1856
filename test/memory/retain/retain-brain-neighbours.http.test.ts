/**
 * A retain's nearest-neighbour search (near-duplicates and semantic links) reads the bank's brain when one is loaded
 * and stands where the tables do: no vector search statement, and the same duplicates and links as the search of the
 * tables' HNSW index gives. A brain behind the tables (a write it has not applied) is not used.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, ok } from "../../support/HttpCalls.ts"
import { probe, recordStatements } from "../../support/StatementProbe.ts"
import { testApp } from "../../support/TestServer.ts"

const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dan Ito", "Eve Marsh"]
const topics = ["the garden budget", "the bridge design", "a trip to Oslo", "the school fair", "a new bakery"]

const turn = (n: number, text?: string) => ({
  content: text ?? `${people[n % people.length]} talked with ${people[(n + 2) % people.length]} about ` +
      `${topics[n % topics.length]} on day ${n}.`,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString()
})

const firstTurns = Array.from({ length: 30 }, (_, n) => turn(n))
/** New turns, and a rewording of turn 7 that only its nearest neighbour shows to be the same fact. */
const nextTurns = [
  ...Array.from({ length: 8 }, (_, n) => turn(100 + n)),
  turn(200, "Carla Diaz talked with Eve Marsh about the trip to Oslo on day 7.")
]

const isNeighbourSearch = (sql: string) => /jsonb_to_recordset.*embedding vector\)\s+CROSS JOIN LATERAL/s.test(sql)

const retainProbed = (bank: string, items: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const answer = yield* probe("POST", `${bankPath(bank)}/memories`, { items })
    assert.strictEqual(answer.response.status, 200, answer.response.text)
    return answer.statements.filter((statement) => isNeighbourSearch(statement.sql)).length
  })

/** The bank's memories and its semantic links, by text (ids differ between banks). */
const contents = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const memories = yield* sql<{ text: string }>`
      SELECT text FROM memory_units WHERE bank_id = ${bank} ORDER BY text`
    const links = yield* sql<{ fromText: string; toText: string; weight: number }>`
      SELECT f.text AS from_text, t.text AS to_text, round(l.weight::numeric, 3)::float8 AS weight
      FROM memory_links l JOIN memory_units f ON f.id = l.from_id JOIN memory_units t ON t.id = l.to_id
      WHERE l.bank_id = ${bank} AND l.link_type = 'semantic'
      ORDER BY f.text, t.text`
    return { memories: memories.map((row) => row.text), links }
  })

const recall = (bank: string) => ok("POST", `${bankPath(bank)}/memories/recall`, { query: "the bridge design" })

layer(Layer.provide(testApp({ enableObservations: false }), recordStatements), { excludeTestServices: true })(
  "retain's neighbours from the brain",
  (it) => {
    it.effect("with the brain loaded, a retain searches no table and stores the same duplicates and links", () =>
      Effect.gen(function*() {
        const cold = "neighbours-cold"
        const warm = "neighbours-warm"
        for (const bank of [cold, warm]) yield* ok("POST", `${bankPath(bank)}/memories`, { items: firstTurns })
        // A recall loads the warm bank's brain; the cold bank has none.
        yield* recall(warm)
        assert.strictEqual(yield* retainProbed(cold, nextTurns), 1)
        assert.strictEqual(yield* retainProbed(warm, nextTurns), 0)
        const fromTables = yield* contents(cold)
        const fromBrain = yield* contents(warm)
        // The rewording was found to be a duplicate both ways: 30 + 8 memories, not 39.
        assert.strictEqual(fromTables.memories.length, 38)
        assert.deepStrictEqual(fromBrain.memories, fromTables.memories)
        assert.isAbove(fromTables.links.length, 0)
        assert.deepStrictEqual(fromBrain.links, fromTables.links)
      }))

    it.effect("a brain behind the tables is not used: a memory deleted behind its back is no duplicate", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const bank = "neighbours-behind"
        yield* ok("POST", `${bankPath(bank)}/memories`, { items: firstTurns })
        yield* recall(bank)
        // Deleted in SQL, not through the service: the brain is not told and still holds the memory.
        yield* sql`DELETE FROM memory_units WHERE bank_id = ${bank} AND text LIKE '%about a trip to Oslo on day 7.%'`
        assert.strictEqual(yield* retainProbed(bank, [nextTurns.at(-1)!]), 1)
        const after = yield* contents(bank)
        assert.strictEqual(after.memories.length, 30)
        assert.isTrue(after.memories.some((text) => text.includes("about the trip to Oslo on day 7")))
      }))
  }
)
