/**
 * Memories that expire, over the real HTTP server on both database tiers: `expires_at` is validated on retain and on
 * a memory update (400 naming the field, nothing stored); once a memory's expiry has come, recall (from the brain
 * and from SQL), reflect, the list and a get no longer return it, before any sweep ran; the sweep then deletes it
 * with its derived state and audits itself without the memory's content. The passage of time is made by moving the
 * stored expiry into the past (no test waits on the clock).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GraphRecall } from "../../../src/memory/recall/GraphRecall.ts"
import { Recall } from "../../../src/memory/recall/Recall.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const bank = "expiring"
const base = bankPath(bank)
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()
const secret = "Zephyrine keeps the spare office key under the blue flowerpot."
const lasting = "Marguerite waters the office plants every Monday."

const recalledTexts = (query: string) =>
  Effect.map(
    ok("POST", `${base}/memories/recall`, { query, budget: "high" }),
    (r) => r.body.results.map((x: any) => x.text as string)
  )

layer(testApp(), { excludeTestServices: true })("memory expiry", (it) => {
  it.effect("bad expiries are refused with the field named, and nothing is stored", () =>
    Effect.gen(function*() {
      for (
        const [expires, reason] of [["tomorrow", "ISO 8601"], ["2020-01-01T00:00:00Z", "future"], [
          42,
          "string"
        ]] as const
      ) {
        const refused = yield* call("POST", `${bankPath("refused-expiry")}/memories`, {
          items: [{ content: "A memory that must not be stored." }, { content: "Another one.", expires_at: expires }]
        })
        assert.strictEqual(refused.status, 400, refused.text)
        assert.include(refused.text, "items.1.expires_at")
        if (reason !== "string") assert.include(refused.text, reason)
      }
      // Nothing was stored: not even the bank was created.
      assert.strictEqual((yield* call("GET", `${bankPath("refused-expiry")}/memories/list`)).status, 404)
    }))

  it.effect("an expired memory is gone from every read at once, and the sweep deletes it, audited without content", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const recall = yield* Recall
      const graph = yield* GraphRecall
      yield* ok("POST", `${base}/memories`, {
        items: [{ content: secret, expires_at: inAnHour(), tags: ["office"] }, { content: lasting, tags: ["office"] }]
      })
      const listed = (yield* ok("GET", `${base}/memories/list?limit=100`)).body.items as Array<any>
      const expiring = listed.find((item) => item.text.includes("Zephyrine"))
      assert.isDefined(expiring)
      assert.isString(expiring.expires_at)
      assert.isUndefined(listed.find((item) => item.text.includes("Marguerite")).expires_at)
      assert.include(yield* recalledTexts("Where is the spare office key?"), expiring.text)

      // A memory update validates the field too, and changes nothing when it refuses.
      for (const bad of ["next week", "2001-01-01T00:00:00Z"]) {
        const refused = yield* call("PATCH", `${base}/memories/${expiring.id}`, { expires_at: bad })
        assert.strictEqual(refused.status, 400, refused.text)
        assert.include(refused.text, "expires_at")
      }
      const later = new Date(Date.now() + 7_200_000).toISOString()
      const patched = yield* ok("PATCH", `${base}/memories/${expiring.id}`, { expires_at: later })
      assert.strictEqual(patched.body.expires_at, later)

      // The scheduler, woken by the update, queues no sweep for a bank that has one open: an open sweep row (as if
      // another runner were sweeping) holds the real sweep off, so the reads below are checked against a stored row.
      const holdSweep = crypto.randomUUID()
      yield* sql`INSERT INTO operations (id, bank_id, task_type, status, payload)
        VALUES (${holdSweep}, ${bank}, 'expiry_sweep', 'running', '{}')`
      // Its time comes: the stored expiry moves into the past, as the clock would move past it. The brain is told of
      // the row as of any write (it held the expiry since the update above; now it holds the earlier one).
      yield* sql`UPDATE memory_units SET expires_at = now() - interval '1 second' WHERE id = ${expiring.id}`
      yield* graph.changed(bank)
      const asked = { query: "Where is the spare office key?", budget: "high" as const }
      const fromBrain = yield* recall.recallWith(bank, asked, {}).pipe(Effect.orDie)
      const fromSql = yield* recall.recallWith(bank, asked, { source: "sql" }).pipe(Effect.orDie)
      for (const response of [fromBrain, fromSql]) {
        assert.notInclude(response.results.map((result) => result.id), expiring.id)
      }
      assert.notInclude(yield* recalledTexts("spare office key flowerpot Zephyrine"), expiring.text)
      assert.include(
        yield* recalledTexts("Who waters the office plants?"),
        listed.find((item) => item.text.includes("Marguerite")).text
      )
      const reflected = yield* ok("POST", `${base}/reflect`, { query: "Where is the spare office key?" })
      assert.notInclude(reflected.text, "flowerpot")
      assert.notInclude((yield* ok("GET", `${base}/memories/list?limit=100`)).text, "Zephyrine")
      assert.strictEqual((yield* call("GET", `${base}/memories/${expiring.id}`)).status, 404)
      assert.strictEqual((yield* call("PATCH", `${base}/memories/${expiring.id}`, { context: "x" })).status, 404)
      // The sweep has not run (it was held off): the row is still stored, and every read hid it regardless.
      assert.strictEqual((yield* sql`SELECT 1 FROM memory_units WHERE id = ${expiring.id}`).length, 1)
      yield* sql`DELETE FROM operations WHERE id = ${holdSweep}`

      // A new expiring memory wakes the scheduler, which finds the expired one due and sweeps it.
      yield* ok("POST", `${base}/memories`, {
        items: [{ content: "The fire drill is next Thursday.", expires_at: inAnHour() }]
      })
      yield* eventually(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units WHERE id = ${expiring.id}`.pipe(Effect.orDie),
        (rows) => rows[0]!.n === 0,
        Duration.seconds(30)
      )
      yield* settled(bank)
      const entity = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM entities WHERE bank_id = ${bank} AND canonical_name ILIKE 'Zephyrine%'`
      assert.strictEqual(entity[0]!.n, 0, "the entity only the expired memory named is gone with it")
      const audit = yield* ok("GET", `${base}/audit-logs?action=memories.expiry_sweep`)
      assert.strictEqual(audit.body.total, 1, audit.text)
      assert.strictEqual(audit.body.items[0].transport, "system")
      assert.notInclude(audit.text, "Zephyrine")
      assert.notInclude(audit.text, "flowerpot")
    }))
})
