/**
 * The memory read routes cost the same number of SQL statements however many memories they return: the graph
 * view, a page of the memory list and one memory read their entity names and types in set-based statements,
 * never a statement (or a subquery plan) per memory. Statements are counted per HTTP request by a statement
 * transformer in the in-process server, keyed by a request header, so background work cannot blur the count.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import {
  probe as probeRequest,
  type RecordedStatement as Recorded,
  recordStatements
} from "../support/StatementProbe.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = "read-statements"
const base = `/v1/default/banks/${bank}`
const memories = 520

/** One GET over HTTP and the statements it ran. */
const probe = (path: string) =>
  Effect.gen(function*() {
    const { response, body, statements } = yield* probeRequest("GET", `${base}${path}`)
    assert.strictEqual(response.status, 200, response.text)
    return { body, statements }
  })

const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dmitri Petrov", "Eva Lind", "Farid Haddad"]
const places = ["Lisbon", "Berlin", "Oslo", "Kyoto"]

/** Most memories name two people and a place; every fifth names nobody. */
const item = (n: number) => ({
  content: n % 5 === 0
    ? `the coffee machine was cleaned and the plants were watered, entry ${n}.`
    : `${people[n % people.length]} met ${people[(n + 2) % people.length]} in ${
      places[n % places.length]
    } about the harbour project, entry ${n}.`,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 3_600_000).toISOString()
})

/** Whether PostgreSQL plans any subquery that runs once per row of the statement. */
const runsSubqueryPerRow = (statement: Recorded) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe(`EXPLAIN (FORMAT JSON) ${statement.sql}`, statement.params).pipe(Effect.orDie)
    const plan = Object.values(rows[0] as Record<string, unknown>)[0]
    return JSON.stringify(typeof plan === "string" ? JSON.parse(plan) : plan).includes(
      "\"Parent Relationship\":\"SubPlan\""
    )
  })

const readsMemories = (statement: Recorded) => /memory_units|unit_entities|memory_links/.test(statement.sql)

/** A bank of a few hundred memories with entities, retained once before the first test (each can run alone). */
const readBank = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* TestServer
  yield* server.request("PUT", base, { json: { enable_observations: false } })
  for (let start = 0; start < memories; start += 100) {
    const items = Array.from({ length: Math.min(100, memories - start) }, (_, i) => item(start + i))
    const retained = yield* server.request("POST", `${base}/memories`, { json: { items } })
    if (retained.status !== 200) return yield* Effect.die(new Error(`retaining the bank: ${retained.text}`))
  }
}))

layer(Layer.provideMerge(readBank, Layer.provide(testApp(), recordStatements)), {
  excludeTestServices: true,
  timeout: "120 seconds"
})("read statements", (it) => {
  it.effect("the bank holds the few hundred memories every test reads", () =>
    Effect.gen(function*() {
      const listed = yield* probe("/memories/list?limit=1")
      assert.isAtLeast(listed.body.total, 500)
    }))

  it.effect("GET graph costs the same statements for 50 and for 500 nodes, none with a per-row subquery", () =>
    Effect.gen(function*() {
      const small = yield* probe("/graph?limit=50")
      const large = yield* probe("/graph?limit=500")
      assert.strictEqual(small.body.nodes.length, 50)
      assert.strictEqual(large.body.nodes.length, 500)
      assert.strictEqual(large.statements.length, small.statements.length)
      assert.isAtMost(large.statements.length, 6, large.statements.map((s) => s.sql).join("\n---\n"))
      // The nodes, their count and their links: the probe sees the request's statements.
      assert.isAtLeast(large.statements.filter(readsMemories).length, 3)
      for (const statement of large.statements.filter(readsMemories)) {
        assert.isFalse(yield* runsSubqueryPerRow(statement), statement.sql)
      }
      // The names and types read in one aggregate belong to the right nodes, in name order.
      const listed = yield* probe("/memories/list?limit=1000")
      const entitiesOf = new Map<string, ReadonlyArray<string>>(listed.body.items.map((m: any) => [m.id, m.entities]))
      for (const node of large.body.nodes) assert.deepStrictEqual(node.entities, entitiesOf.get(node.id), node.text)
      const named = large.body.nodes.filter((node: any) => node.entities.length >= 2)
      assert.isAbove(named.length, 100)
      assert.isTrue(large.body.nodes.some((node: any) => node.entities.length === 0))
      for (const node of named) assert.deepStrictEqual(node.entities, [...node.entities].sort())
      const row = large.body.table_rows.find((r: any) => r.id === named[0].id)
      assert.strictEqual(row.entities.split(", ").length, named[0].entities.length)
      assert.isTrue(row.entities.startsWith(named[0].entities[0]), row.entities)
    }))

  it.effect("GET memories/list costs the same statements for a page of 50 and of 500", () =>
    Effect.gen(function*() {
      const small = yield* probe("/memories/list?limit=50")
      const large = yield* probe("/memories/list?limit=500")
      assert.strictEqual(small.body.items.length, 50)
      assert.strictEqual(large.body.items.length, 500)
      assert.deepStrictEqual(large.body.items.slice(0, 50), small.body.items)
      assert.strictEqual(large.statements.length, small.statements.length)
      assert.isAtMost(large.statements.length, 5, large.statements.map((s) => s.sql).join("\n---\n"))
      for (const statement of large.statements.filter(readsMemories)) {
        assert.isFalse(yield* runsSubqueryPerRow(statement), statement.sql)
      }
    }))

  it.effect("GET one memory costs the same statements with or without entities, with its names in order", () =>
    Effect.gen(function*() {
      const page = yield* probe("/memories/list?limit=20")
      const withNames = page.body.items.find((m: any) => m.entities.length >= 2)
      const without = page.body.items.find((m: any) => m.entities.length === 0)
      const one = yield* probe(`/memories/${withNames.id}`)
      const other = yield* probe(`/memories/${without.id}`)
      assert.deepStrictEqual(one.body.entities, withNames.entities)
      assert.deepStrictEqual(other.body.entities, [])
      assert.strictEqual(one.statements.length, other.statements.length)
      assert.isAtMost(one.statements.length, 3, one.statements.map((s) => s.sql).join("\n---\n"))
      for (const statement of one.statements.filter(readsMemories)) {
        assert.isFalse(yield* runsSubqueryPerRow(statement), statement.sql)
      }
    }))
})
