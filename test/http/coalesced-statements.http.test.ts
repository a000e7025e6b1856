/**
 * Many agents retaining at once: each retain reads its bank's row, writes its audit row and queues its event's
 * webhook deliveries. Concurrent retains share those statements (`src/storage/Coalesced.ts`) — fewer statements than
 * retains — and each still gets what it had alone: its audit entry, its delivery per subscribed webhook (none for a
 * bank without one), and deliveries a webhook pages through in order, none lost or repeated.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { makeStatementLog } from "../support/StatementLog.ts"
import { databaseTier, testApp, TestServer } from "../support/TestServer.ts"

const { count, layer: recordEveryStatement, ran } = makeStatementLog()

const banks = "/v1/default/banks"
const withHook = "coalesced-a"
const without = "coalesced-b"

layer(Layer.provide(testApp({ enableObservations: false }), recordEveryStatement), {
  excludeTestServices: true,
  timeout: "2 minutes"
})("retains at once", (it) => {
  it.effect("share their bank reads, audit rows and webhook outbox rows; each keeps its own", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (const bank of [withHook, without]) {
        assert.strictEqual((yield* server.request("PUT", `${banks}/${bank}`, { json: {} })).status, 200)
      }
      // Nothing listens there: the deliveries stay in the outbox, retried, which is all this test reads.
      const hook = yield* server.request("POST", `${banks}/${withHook}/webhooks`, {
        json: { url: "http://127.0.0.1:9/hook", event_types: ["retain.completed"] }
      })
      assert.strictEqual(hook.status, 201, hook.text)

      const retains = Array.from({ length: 40 }, (_, n) => ({ bank: n % 4 === 3 ? without : withHook, n }))
      const since = ran.length
      const answers = yield* Effect.forEach(
        retains,
        ({ bank, n }) =>
          server.request("POST", `${banks}/${bank}/memories`, {
            json: { items: [{ content: `Agent ${n} noted that the shipment number ${n} left the depot.` }] }
          }),
        { concurrency: "unbounded" }
      )
      for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)

      // 40 retains: one statement each before. The audit and outbox rows are written after the retains' groups
      // commit, all at once on both tiers; the bank reads come as the requests arrive, which the embedded tier's one
      // session queues (PostgreSQL's pool runs most of them at once, alone).
      const bankReads = count(since, /^SELECT \* FROM banks WHERE bank_id (=|IN)/)
      const auditWrites = count(since, /^INSERT INTO audit_logs/)
      const outboxWrites = count(since, /^INSERT INTO webhook_deliveries/)
      assert.isBelow(auditWrites, 30, `audit writes: ${auditWrites}`)
      assert.isBelow(outboxWrites, 30, `outbox writes: ${outboxWrites}`)
      assert.isAtMost(bankReads, 40, `bank reads: ${bankReads}`)
      if (databaseTier === "pglite") assert.isBelow(bankReads, 30, `bank reads: ${bankReads}`)

      const audited = (bank: string) =>
        server.request("GET", `${banks}/${bank}/audit-logs?action=memories.retain&limit=100`).pipe(
          Effect.map((response) => response.body.total as number)
        )
      assert.strictEqual(yield* audited(withHook), 30)
      assert.strictEqual(yield* audited(without), 10)

      // The webhook's 30 deliveries, paged 7 at a time: each event once, in a strict order.
      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const query: string = cursor === null ? "?limit=7" : `?limit=7&cursor=${encodeURIComponent(cursor)}`
        const page = yield* server.request("GET", `${banks}/${withHook}/webhooks/${hook.body.id}/deliveries${query}`)
        assert.strictEqual(page.status, 200, page.text)
        seen.push(...page.body.items.map((item: any) => item.event_id as string))
        cursor = page.body.next_cursor
      } while (cursor !== null)
      assert.strictEqual(seen.length, 30)
      assert.strictEqual(new Set(seen).size, 30)
    }))
})
