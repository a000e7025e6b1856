/**
 * Links go with the memories they join. No foreign key removes them any more (migration 0035): a statement-level
 * trigger does, for every way memories are deleted — a replaced or deleted document, a cleared bank, a deleted bank.
 * The bank's stats count links by their bank and, per fact type, through the memory they start from, so a link
 * left behind by a deleted memory shows there as a difference (and in the database as a link to no memory).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { bankPath, ok } from "../support/HttpCalls.ts"
import { testApp } from "../support/TestServer.ts"

const people = ["Alice Novak", "Bob Stone", "Carla Diaz", "Dan Ito"]

const turn = (n: number, documentId?: string) => ({
  content: `${people[n % people.length]} met ${
    people[(n + 1) % people.length]
  } in Lisbon to plan the garden project, step ${n}.`,
  timestamp: new Date(Date.UTC(2024, 0, 1) + n * 60_000).toISOString(),
  ...(documentId === undefined ? {} : { document_id: documentId })
})

const stats = (bank: string) =>
  Effect.map(ok("GET", `${bankPath(bank)}/stats`), (response) => ({
    total: response.body.total_links as number,
    fromLiveMemories: Object.values(response.body.links_by_fact_type as Record<string, number>).reduce(
      (a, b) => a + b,
      0
    )
  }))

/** Links of the whole database (every bank) with an end that is no memory: what a missed clean-up leaves. */
const orphanLinks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ count: number }>`
    SELECT count(*)::int AS count FROM memory_links l
    WHERE NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.from_id)
      OR NOT EXISTS (SELECT 1 FROM memory_units u WHERE u.id = l.to_id)`
  return rows[0]!.count
})

layer(testApp({ enableObservations: false }), { excludeTestServices: true })("link cleanup", (it) => {
  it.effect("deleting memories in any way deletes their links", () =>
    Effect.gen(function*() {
      const bank = "link-cleanup"
      const base = bankPath(bank)
      yield* ok("POST", `${base}/memories`, {
        items: [
          ...Array.from({ length: 12 }, (_, n) => turn(n)),
          ...Array.from({ length: 8 }, (_, n) => turn(20 + n, "plan")),
          ...Array.from({ length: 8 }, (_, n) => turn(40 + n, "notes"))
        ]
      })
      const before = yield* stats(bank)
      assert.isAbove(before.total, 0)
      assert.strictEqual(before.total, before.fromLiveMemories)

      // A replaced document: its old memories go with their links; the new one links afresh.
      yield* ok("POST", `${base}/memories`, { items: [turn(60, "plan")] })
      const replaced = yield* stats(bank)
      assert.strictEqual(replaced.total, replaced.fromLiveMemories)
      assert.isBelow(replaced.total, before.total)
      assert.strictEqual(yield* orphanLinks, 0)

      // A deleted document.
      yield* ok("DELETE", `${base}/documents/notes`)
      const deleted = yield* stats(bank)
      assert.strictEqual(deleted.total, deleted.fromLiveMemories)
      assert.isBelow(deleted.total, replaced.total)
      assert.strictEqual(yield* orphanLinks, 0)

      // A cleared bank holds no link.
      yield* ok("DELETE", `${base}/memories`)
      assert.strictEqual(yield* orphanLinks, 0)
      assert.deepStrictEqual(yield* stats(bank), { total: 0, fromLiveMemories: 0 })

      // A deleted bank leaves none behind for a new bank of the same name: its first memory has nothing to link to.
      yield* ok("POST", `${base}/memories`, { items: Array.from({ length: 6 }, (_, n) => turn(80 + n)) })
      assert.isAbove((yield* stats(bank)).total, 0)
      yield* ok("DELETE", base)
      assert.strictEqual(yield* orphanLinks, 0)
      yield* ok("POST", `${base}/memories`, { items: [turn(99)] })
      assert.deepStrictEqual(yield* stats(bank), { total: 0, fromLiveMemories: 0 })
    }))
})
