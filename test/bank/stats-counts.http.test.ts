/**
 * `GET {bank}/stats` reads counts that triggers keep up to date in each write's transaction (`bank_counts`); through
 * a random sequence of retains, document replacements, memory and document deletions, clears, fact-type edits,
 * invalidations and restores, each followed by the consolidation it starts (observations and their links), every
 * figure it answers equals a fresh count over the bank's memories and links. A deleted bank leaves no counts behind.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { MemoryUnits } from "../../src/memory/MemoryUnits.ts"
import { recountStats } from "../support/StatsRecount.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const bankId = "counted"
const path = `/v1/default/banks/${bankId}`
const people = ["Ana Lopez", "Ben", "Chloe Martin", "Dev"]
const places = ["the market", "the harbour", "the library"]

const request = (method: string, url: string, json?: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, url, json === undefined ? {} : { json })
  })

const okay = (method: string, url: string, json?: unknown) =>
  Effect.map(request(method, url, json), (response) => {
    assert.strictEqual(response.status, 200, response.text)
    return response
  })

/** The figures of `GET stats` that the recount gives, with the totals checked against them. */
const assertExact = (step: string) =>
  Effect.gen(function*() {
    const stats = (yield* okay("GET", `${path}/stats`)).body
    const recount = yield* recountStats(bankId)
    const sortKeys = (value: unknown): unknown =>
      value !== null && typeof value === "object"
        ? Object.fromEntries(
          Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sortKeys(v)])
        )
        : value
    assert.deepStrictEqual(
      sortKeys({
        nodes_by_fact_type: stats.nodes_by_fact_type,
        links_by_link_type: stats.links_by_link_type,
        links_by_fact_type: stats.links_by_fact_type,
        links_breakdown: stats.links_breakdown,
        total_documents: stats.total_documents,
        pending_consolidation: stats.pending_consolidation
      }),
      sortKeys(recount),
      step
    )
    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0)
    assert.strictEqual(stats.total_nodes, sum(recount.nodes_by_fact_type), `${step}: total_nodes`)
    assert.strictEqual(stats.total_links, sum(recount.links_by_link_type), `${step}: total_links`)
    assert.strictEqual(stats.total_observations, recount.nodes_by_fact_type.observation, `${step}: observations`)
    const sql = yield* SqlClient.SqlClient
    const [latest] = yield* sql<{ last: Date | null }>`SELECT max(greatest(created_at, updated_at)) AS last
      FROM memory_units WHERE bank_id = ${bankId}`
    if (latest?.last != null) {
      assert.isAtLeast(Date.parse(stats.last_memory_write_at), latest.last.getTime(), `${step}: last memory write`)
    }
    return stats
  })

const settled = eventually(
  request("GET", `${path}/stats`),
  (r) => r.body.pending_consolidation === 0 && r.body.pending_operations === 0
)

/** A small seeded generator, so a failure names a reproducible step. */
const random = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 4294967296
}

layer(testApp({ enableObservations: true }), { excludeTestServices: true, timeout: "4 minutes" })(
  "bank stats",
  (it) => {
    it.effect("stay equal to a recount through random writes and deletes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const units = yield* MemoryUnits
        const next = random(7)
        const pick = <A>(list: ReadonlyArray<A>) => list[Math.floor(next() * list.length)]!
        let counter = 0
        const item = () => {
          counter += 1
          const [a, b] = [pick(people), pick(people)]
          return {
            content: `${a} met ${b} at ${pick(places)} because of plan number ${counter}, so they agreed on it.`,
            timestamp: `2024-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 9)}T10:00:00Z`,
            entities: [{ text: a }, { text: b }]
          }
        }
        const someMemory = (where: Statement.Fragment) =>
          Effect.map(
            sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bankId} AND ${where} ORDER BY seq`.pipe(
              Effect.orDie
            ),
            (rows) => rows.length === 0 ? undefined : pick(rows).id
          )
        const documents = new Set<string>()
        const invalidated: Array<string> = []
        const seen = new Set<string>()
        for (let step = 0; step < 40; step++) {
          const roll = next()
          let label: string
          if (roll < 0.35) {
            const items = Array.from({ length: 1 + Math.floor(next() * 3) }, item)
            yield* okay("POST", `${path}/memories`, { items })
            label = `retain ${items.length}`
          } else if (roll < 0.5) {
            const documentId = `doc-${Math.floor(next() * 3)}`
            yield* okay("POST", `${path}/memories`, {
              items: Array.from({ length: 1 + Math.floor(next() * 2) }, () => ({ ...item(), document_id: documentId }))
            })
            documents.add(documentId)
            label = `replace ${documentId}`
          } else if (roll < 0.62) {
            const id = yield* someMemory(sql.literal("true"))
            if (id === undefined) continue
            yield* units.remove(bankId, id)
            label = "delete memory"
          } else if (roll < 0.7) {
            if (documents.size === 0) continue
            const documentId = pick([...documents])
            yield* okay("DELETE", `${path}/documents/${documentId}`)
            documents.delete(documentId)
            label = `delete ${documentId}`
          } else if (roll < 0.8) {
            const id = yield* someMemory(sql`fact_type IN ('world', 'experience')`)
            if (id === undefined) continue
            const [row] = yield* sql<{ factType: string }>`SELECT fact_type FROM memory_units WHERE id = ${id}`
            yield* okay("PATCH", `${path}/memories/${id}`, {
              fact_type: row!.factType === "world" ? "experience" : "world"
            })
            label = "change a fact type"
          } else if (roll < 0.88) {
            const id = yield* someMemory(sql`fact_type IN ('world', 'experience')`)
            if (id === undefined) continue
            yield* okay("PATCH", `${path}/memories/${id}`, { state: "invalidated", reason: "wrong" })
            invalidated.push(id)
            label = "invalidate"
          } else if (roll < 0.95) {
            const id = invalidated.pop()
            if (id === undefined) continue
            yield* okay("PATCH", `${path}/memories/${id}`, { state: "valid" })
            label = "restore"
          } else {
            yield* okay("DELETE", `${path}/memories?type=${pick(["world", "experience", "observation"])}`)
            label = "clear a type"
          }
          // Consolidation writes in the background: compared once it has settled (a stats call and a recount taken
          // while it writes would each see a different moment).
          yield* settled
          const stats = yield* assertExact(`step ${step} (${label})`)
          for (const [type, n] of Object.entries(stats.nodes_by_fact_type)) if ((n as number) > 0) seen.add(type)
          for (const type of Object.keys(stats.links_by_link_type)) seen.add(`link ${type}`)
        }
        yield* eventually(
          request("GET", `${path}/stats`),
          (r) => r.body.pending_consolidation === 0 && r.body.pending_operations === 0
        )
        yield* assertExact("after consolidation")
        assert.includeMembers([...seen], ["world", "experience", "link entity"], "the sequence wrote these kinds")

        yield* okay("DELETE", path)
        const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM bank_counts WHERE bank_id = ${bankId}`
        assert.strictEqual(left[0]!.n, 0, "a deleted bank leaves no counts")
      }))

    // Migration 0040 folded its INSERT and DELETE branches (the same count, signed) into one statement; the property
    // test above checks that the counts still agree with a recount.
    it.effect("the links' count trigger counts inserts and deletes with one statement", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ source: string }>`SELECT p.prosrc AS source FROM pg_proc p
          JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE p.proname = 'bank_counts_links_changed' AND n.nspname = current_schema()`
        assert.lengthOf(rows, 1)
        assert.lengthOf(rows[0]!.source.match(/bank_counts_add\(/g) ?? [], 1, rows[0]!.source)
      }))
  }
)
