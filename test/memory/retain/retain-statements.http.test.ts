/**
 * A retain over HTTP runs the same statements for one item as for a hundred: one statement per table per batch, no
 * round trip per item, per fact, per entity or per link. A batch that grows from 1 to 100 items (and from a handful
 * to a few hundred entities and links) must not add a statement, or the write path's cost grows with round trips.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { bankPath } from "../../support/HttpCalls.ts"
import { probe, recordStatements } from "../../support/StatementProbe.ts"
import { testApp } from "../../support/TestServer.ts"

const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dan Ito", "Eve Marsh", "Finn Olsen", "Gina Park"]
const places = ["Lisbon", "Oslo", "Paris", "Boston", "Seattle"]

const turn = (n: number) => ({
  content: `${people[n % people.length]} met ${people[(n * 3 + 1) % people.length]} in ${places[n % places.length]}` +
    ` to plan project ${n}. They agreed on a budget of ${100 + n} dollars.`,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString()
})

const retained = (bank: string, from: number, count: number) =>
  Effect.gen(function*() {
    const items = Array.from({ length: count }, (_, n) => turn(from + n))
    const answer = yield* probe("POST", `${bankPath(bank)}/memories`, { items })
    assert.strictEqual(answer.response.status, 200, answer.response.text)
    assert.strictEqual(answer.body.items_count, count)
    return answer.statements.map((statement) => ({
      sql: statement.sql.replace(/\s+/g, " ").trim(),
      params: statement.params.length
    }))
  })

/** What the statement is about (its verb and table), not its parameters or batch-sized lists. */
const shape = (sql: string) => sql.replace(/\$\d+(, \$\d+)*/g, "$n").slice(0, 80)

layer(Layer.provide(testApp({ enableObservations: false }), recordStatements), { excludeTestServices: true })(
  "retain statements",
  (it) => {
    it.effect("a retain of 100 items runs no more statements than a retain of one", () =>
      Effect.gen(function*() {
        const bank = "retain-statements"
        // The first retain creates the bank; the bank then holds memories for the next ones to link to.
        yield* retained(bank, 0, 20)
        const one = yield* retained(bank, 1000, 1)
        const hundred = yield* retained(bank, 2000, 100)
        assert.deepStrictEqual(hundred.map(({ sql }) => shape(sql)), one.map(({ sql }) => shape(sql)))
        // Every memory-graph table is written once per batch at most.
        for (const table of ["memory_units", "memory_links", "unit_entities", "entity_aliases", "chunks"]) {
          const writes = hundred.filter(({ sql }) => new RegExp(`^(WITH .*)?INSERT INTO ${table}\\b`).test(sql))
          assert.isAtMost(writes.length, 1, `${table}: ${writes.map(({ sql }) => sql).join("\n")}`)
        }
        // Anomaly detection reads the batch's linked pairs, their shared entities and the statements on both sides
        // in one statement, with the new units as one array: no list of every neighbour's id (1,000-2,000 per batch
        // of 100 in a grown bank) is sent as parameters.
        const reads = hundred.filter(({ sql }) =>
          !/^(WITH .*)?INSERT INTO/.test(sql) && /\bJOIN memory_links\b|\bFROM memory_links\b/.test(sql)
        )
        assert.strictEqual(reads.length, 1, reads.map(({ sql }) => sql).join("\n"))
        assert.isAtMost(reads[0]!.params, 10, reads[0]!.sql)
      }))
  }
)
