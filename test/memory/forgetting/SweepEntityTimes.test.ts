/**
 * An entity's first and last seen times after a sweep deletes the oldest facts, over the real HTTP server on both
 * tiers. A sweep moves the first time of every entity its slice named; the new time is found by walking the bank's
 * facts in time order from the old one, and only an entity the walk does not meet within a few hundred facts has all
 * its mentions recounted (`EntityMentions.recountTimes`). Here a busy entity (named by every fact) takes the first
 * path and a rare one (named by the oldest fact and by one more than 256 facts later) the second; both, and every
 * other entity, must end equal to a full recount of the facts that still name them.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GraphRecall } from "../../../src/memory/recall/GraphRecall.ts"
import { bankPath, ok } from "../../support/HttpCalls.ts"
import { entitiesBesideRecount } from "../../support/EntityRecount.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const bank = "sweep-entity-times"
const base = bankPath(bank)
const facts = 300
const hour = 3_600_000
const start = Date.parse("2024-01-01T00:00:00Z")

const compare = entitiesBesideRecount(bank)

layer(testApp(), { excludeTestServices: true })("a sweep of the oldest facts", (it) => {
  it.effect(
    "leaves every entity's first and last seen equal to a recount, for busy and rare entities",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const graph = yield* GraphRecall
        // One fact an hour; every fact names Bramblewick, only the first and the last name Quillon Marsh.
        const item = (i: number) => ({
          content: `Weather note ${i}: Bramblewick recorded ${i % 7} millimetres of rain at the station.`,
          timestamp: new Date(start + i * hour).toISOString(),
          entities: [{ text: "Bramblewick" }, ...(i === 0 || i === facts - 1 ? [{ text: "Quillon Marsh" }] : [])]
        })
        for (let from = 0; from < facts; from += 100) {
          yield* ok("POST", `${base}/memories`, {
            items: Array.from({ length: Math.min(100, facts - from) }, (_, k) => item(from + k))
          })
        }
        const before = yield* compare
        const rare = before.find((row) => row.name === "Quillon Marsh")
        assert.isDefined(rare)
        assert.strictEqual(rare!.firstSeen?.getTime(), start)

        // The facts of the first three hours expire (the stored expiry moves into the past, as the clock would move
        // past it); a new expiring memory wakes the scheduler, which sweeps them.
        const oldest = yield* sql<{ id: string }>`SELECT id FROM memory_units
        WHERE bank_id = ${bank} AND coalesce(mentioned_at, created_at) < ${new Date(start + 3 * hour)}`
        assert.isAbove(oldest.length, 0)
        yield* sql`UPDATE memory_units SET expires_at = now() - interval '1 second'
        WHERE id IN ${sql.in(oldest.map((row) => row.id))}`
        yield* graph.changed(bank)
        yield* ok("POST", `${base}/memories`, {
          items: [{
            content: "The station closes for maintenance.",
            expires_at: new Date(Date.now() + hour).toISOString()
          }]
        })
        yield* eventually(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
          WHERE id IN ${sql.in(oldest.map((row) => row.id))}`.pipe(Effect.orDie),
          (rows) => rows[0]!.n === 0,
          Duration.seconds(60)
        )

        const after = yield* compare
        for (const row of after) {
          assert.strictEqual(row.stored, row.mentions ?? 0, `${row.name} mention_count`)
          if (row.mentions === null) continue
          assert.strictEqual(row.firstSeen?.getTime(), row.first?.getTime(), `${row.name} first_seen`)
          assert.strictEqual(row.lastSeen?.getTime(), row.last?.getTime(), `${row.name} last_seen`)
        }
        // The rare entity's first time moved past the walk's reach (all its mentions recounted), the busy one's by
        // three hours (found at once).
        const busy = after.find((row) => row.name === "Bramblewick")
        assert.strictEqual(busy?.firstSeen?.getTime(), start + 3 * hour)
        const rareAfter = after.find((row) => row.name === "Quillon Marsh")
        assert.strictEqual(rareAfter?.firstSeen?.getTime(), start + (facts - 1) * hour)
        assert.strictEqual(rareAfter?.stored, 1)
      }),
    { timeout: 180_000 }
  )
})
