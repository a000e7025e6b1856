/**
 * Entity mention counts and first/last seen stay equal to a recount over the facts that name each entity
 * (observations excluded) through a random sequence of retains, document replacements and appends, memory
 * deletions, document deletions and clears, with consolidation writing observations in between. Retain adds to
 * the stored values; every deleting path recounts, so they never drift.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { MemoryUnits } from "../../../src/memory/MemoryUnits.ts"
import { entitiesBesideRecount } from "../../support/EntityRecount.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const bankId = "mentions"
const path = `/v1/default/banks/${bankId}`
const people = ["Ana Lopez", "Ben", "Chloe Martin", "Dev", "Ema Stone"]
const places = ["the market", "the harbour", "the library", "the climbing hall"]

const request = (method: string, url: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, url, json === undefined ? {} : { json })
  })

const settled = eventually(
  request("GET", `${path}/stats`),
  (r) => r.body.pending_consolidation === 0 && r.body.pending_operations === 0
)

const compare = entitiesBesideRecount(bankId)

const assertExact = (step: string) =>
  Effect.gen(function*() {
    const rows = yield* compare
    for (const row of rows) {
      const where = `${step}: ${row.name}`
      assert.strictEqual(row.stored, row.mentions ?? 0, `${where} mention_count`)
      if (row.mentions !== null) {
        assert.strictEqual(row.firstSeen?.getTime(), row.first?.getTime(), `${where} first_seen`)
        assert.strictEqual(row.lastSeen?.getTime(), row.last?.getTime(), `${where} last_seen`)
      }
    }
    return rows
  })

/** A small seeded generator, so a failure names a reproducible step. */
const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

layer(testApp({ enableObservations: true }), { excludeTestServices: true })("retain: entity mentions", (it) => {
  it.effect(
    "stay equal to a recount through retains, replacements, deletions and consolidation",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const units = yield* MemoryUnits
        const next = random(13)
        const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(next() * list.length)]!
        let counter = 0
        const item = () => {
          counter += 1
          const [a, b] = [pick(people), pick(people)]
          // Days out of order, and some timeless items (their time is when they were stored), so first and last
          // seen move both ways.
          const day = 1 + Math.floor(next() * 27)
          return {
            content: `${a} met ${b} at ${pick(places)} and talked about plan number ${counter}.`,
            timestamp: next() < 0.15
              ? "unset"
              : `2024-0${1 + Math.floor(next() * 9)}-${String(day).padStart(2, "0")}T10:00:00Z`,
            entities: [{ text: a }, { text: b }]
          }
        }
        const documents = new Set<string>()
        let decreased = 0
        let before = new Map<string, number>()
        for (let step = 0; step < 45; step++) {
          const roll = next()
          let label: string
          if (roll < 0.45) {
            const items = Array.from({ length: 1 + Math.floor(next() * 3) }, item)
            const response = yield* request("POST", `${path}/memories`, { items })
            assert.strictEqual(response.status, 200, response.text)
            label = `retain ${items.length}`
          } else if (roll < 0.65) {
            const documentId = `doc-${Math.floor(next() * 3)}`
            const append = documents.has(documentId) && next() < 0.4
            const items = Array.from({ length: 1 + Math.floor(next() * 2) }, () => ({
              ...item(),
              document_id: documentId,
              ...(append ? { update_mode: "append" } : {})
            }))
            const response = yield* request("POST", `${path}/memories`, { items })
            assert.strictEqual(response.status, 200, response.text)
            documents.add(documentId)
            label = `${append ? "append to" : "replace"} ${documentId}`
          } else if (roll < 0.88) {
            // Often the earliest fact of an entity, the one whose deletion moves its first seen.
            const facts = yield* sql<{ id: string }>`
            SELECT u.id FROM memory_units u
            WHERE u.bank_id = ${bankId} AND u.fact_type <> 'observation'
            ORDER BY ${next() < 0.5 ? sql`coalesce(u.mentioned_at, u.created_at), u.seq` : sql`u.seq DESC`}
            LIMIT 3`.pipe(Effect.orDie)
            if (facts.length === 0) continue
            const id = pick(facts).id
            yield* units.remove(bankId, id)
            label = `delete memory ${id}`
          } else if (roll < 0.97) {
            if (documents.size === 0) continue
            const documentId = pick([...documents])
            const response = yield* request("DELETE", `${path}/documents/${documentId}`)
            assert.strictEqual(response.status, 200, response.text)
            documents.delete(documentId)
            label = `delete ${documentId}`
          } else {
            const response = yield* request("DELETE", `${path}/memories?type=world`)
            assert.strictEqual(response.status, 200, response.text)
            label = "clear world facts"
          }
          const rows = yield* assertExact(`step ${step} (${label})`)
          for (const row of rows) if (row.stored < (before.get(row.name) ?? 0)) decreased += 1
          before = new Map(rows.map((row) => [row.name, row.stored]))
        }
        yield* settled
        yield* assertExact("after consolidation")
        const [observed] = yield* sql<{ count: number }>`
        SELECT count(*)::int AS count FROM unit_entities ue JOIN memory_units u ON u.id = ue.unit_id
        WHERE u.bank_id = ${bankId} AND u.fact_type = 'observation'`.pipe(Effect.orDie)
        assert.isAbove(observed!.count, 0, "observations name entities, and still do not count as mentions")
        assert.isAbove(decreased, 0, "deletions lowered some counts")

        // What clients read is the same stored value.
        const listed = yield* request("GET", `${path}/entities?limit=100`)
        const rows = yield* compare
        for (const entity of listed.body.items) {
          const row = rows.find((candidate) => candidate.name === entity.canonical_name)
          assert.strictEqual(entity.mention_count, row?.mentions ?? 0, entity.canonical_name)
        }
      }),
    { timeout: 120_000 }
  )
})
