/**
 * A consolidation pass reads in a fixed number of statements, however many observations it updates: the stored
 * facts of every updated observation in one read, the nearest stored observations of every draft in one read.
 * Before, each updated observation read its facts and each draft its neighbours in a statement of its own, so a
 * pass over many retains cost a round trip per observation.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { engramWith, Llm, Recall, Retain } from "../../../src/index.ts"
import { eventually } from "../../support/Eventually.ts"
import { trigramEmbeddings } from "../../support/FakeModels.ts"
import { freshDatabaseSettings } from "../../support/TestServer.ts"

const seen: Array<string> = []
const recording = Layer.succeed(Statement.CurrentTransformer, (statement) => {
  seen.push(statement.compile()[0])
  return Effect.succeed(statement)
})

/** The reads of facts by id or pending (they aggregate each fact's entities) and of nearest observations. */
const factReads = () => seen.filter((text) => text.includes("jsonb_agg(jsonb_build_object('id', e.id")).length
const nearestReads = () =>
  seen.filter((text) => text.includes("fact_type = 'observation'") && text.includes("<=>")).length

const subjects: ReadonlyArray<readonly [string, string, string]> = [
  ["Caroline", "I finished a painting of a lake sunrise for the art show.", "My painting of the lake won a prize."],
  ["Melanie", "I bought a new guitar and practice chords every evening.", "My guitar teacher says my chords improved."],
  ["John", "I signed up for the city marathon and run every morning.", "The marathon training made my knees sore."],
  ["Maria", "I planted tomatoes and basil in the garden behind my house.", "The garden gave me a basket of tomatoes."],
  ["Tim", "I started writing a fantasy novel about a dragon kingdom.", "My novel now has twelve chapters drafted."],
  [
    "Audrey",
    "I opened a small bakery that sells sourdough bread downtown.",
    "The bakery sold out of sourdough bread today."
  ]
]

/** Two rounds of retains, each consolidated; `recallFirst`: a recall loads the bank's brain before the second. */
const twoRounds = (bank: string, recallFirst: boolean) =>
  Effect.gen(function*() {
    const retain = yield* Retain
    const sql = yield* SqlClient.SqlClient
    const caughtUp = eventually(
      sql<{ facts: number; operations: number }>`
      SELECT (SELECT count(*)::int FROM memory_units WHERE bank_id = ${bank} AND consolidated_at IS NULL
                AND fact_type IN ('world', 'experience')) AS facts,
             (SELECT count(*)::int FROM operations WHERE bank_id = ${bank}
                AND status IN ('pending', 'running')) AS operations`,
      (rows) => rows[0]!.facts === 0 && rows[0]!.operations === 0,
      "240 seconds",
      { what: "consolidation caught up" }
    )
    yield* retain.retainNow(bank, {
      items: subjects.map(([name, first]) => ({ content: `${name}: ${first}`, timestamp: "2024-05-01T10:00:00Z" }))
    })
    yield* caughtUp
    if (recallFirst) yield* (yield* Recall).recall(bank, { query: "painting" })
    seen.length = 0
    yield* retain.retainNow(bank, {
      items: subjects.map(([name, , second]) => ({
        content: `${name}: ${second}`,
        timestamp: "2024-05-08T10:00:00Z"
      }))
    })
    yield* caughtUp
    const updated = yield* sql<{ n: number }>`SELECT count(DISTINCT observation_id)::int AS n
    FROM observation_history WHERE bank_id = ${bank} AND change IN ('updated', 'merged')`
    const observations = yield* sql<{ text: string }>`SELECT text FROM memory_units
      WHERE bank_id = ${bank} AND fact_type = 'observation' ORDER BY text`
    return {
      updated: updated[0]!.n,
      factReads: factReads(),
      nearestReads: nearestReads(),
      observations: observations.map((row) => row.text)
    }
  })

const engram = engramWith(
  { ...freshDatabaseSettings(), enableObservations: true },
  Layer.mergeAll(trigramEmbeddings(64), Llm.layerNone)
).pipe(Layer.provideMerge(recording))

describe("consolidation statements", () => {
  it.live(
    "a pass that updates many observations reads their facts and neighbours in one statement each",
    () =>
      Effect.gen(function*() {
        const round = yield* twoRounds("statements", false)
        // The second round grew the first round's observations: several were updated in one pass.
        assert.isAtLeast(round.updated, 4)
        // Two reads of the pending facts (the batch, then none left) and one of the updated observations' facts.
        assert.isAtMost(round.factReads, 3)
        assert.isAtMost(round.nearestReads, 1)
      }).pipe(Effect.provide(engram)),
    600_000
  )

  it.live(
    "with the bank's brain loaded, the nearest stored observations come from it: no search statement, the same result",
    () =>
      Effect.gen(function*() {
        const fromTables = yield* twoRounds("statements-tables", false)
        const fromBrain = yield* twoRounds("statements-brain", true)
        assert.strictEqual(fromTables.nearestReads, 1)
        assert.strictEqual(fromBrain.nearestReads, 0)
        assert.isAtLeast(fromBrain.updated, 4)
        assert.deepStrictEqual(fromBrain.observations, fromTables.observations)
      }).pipe(Effect.provide(engram)),
    600_000
  )
})
