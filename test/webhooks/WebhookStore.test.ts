/**
 * When the outbox says the next delivery falls due: that answer is how long the delivery worker sleeps, so an
 * empty outbox must say "nothing" (it once said "now", and an idle server spun a core), a retry says its backoff,
 * and a claimed delivery falls due when its claim's lease runs out.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { WebhookStore } from "../../src/webhooks/WebhookStore.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const minute = 60_000

const insertDelivery = (id: string, timing: { readonly dueInMinutes: number; readonly claimedMinutesAgo?: number }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO webhook_deliveries (id, webhook_id, bank_id, event_id, event_type, body, status,
        next_attempt_at, claimed_at)
      VALUES (${id}, 'hook-due', 'wh-due', ${id}, 'retain.completed', '{}', 'pending',
        now() + ${timing.dueInMinutes} * interval '1 minute',
        ${
      timing.claimedMinutesAgo === undefined ? null : sql`now() - ${timing.claimedMinutesAgo} * interval '1 minute'`
    })`
  })

layer(testApp(), { excludeTestServices: true })("the webhook outbox's next due time", (it) => {
  it.effect("is none when nothing is pending, the earliest wait otherwise, and a claim's lease end", () =>
    Effect.gen(function*() {
      const store = yield* WebhookStore
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      assert.deepStrictEqual(yield* store.nextDueInMillis, Option.none())

      assert.strictEqual((yield* server.request("PUT", "/v1/default/banks/wh-due", { json: {} })).status, 200)
      // Registered straight in the table: nothing here may reach the delivery worker's HTTP client.
      yield* sql`INSERT INTO webhooks (id, bank_id, url, event_types)
        VALUES ('hook-due', 'wh-due', 'http://127.0.0.1:9/hook', ARRAY['retain.completed'])`
      assert.deepStrictEqual(yield* store.nextDueInMillis, Option.none())

      // Claimed 5 minutes ago by a worker that may have died: due when the 15-minute lease ends.
      yield* insertDelivery("held", { dueInMinutes: -1, claimedMinutesAgo: 5 })
      const leaseEnd = Option.getOrThrow(yield* store.nextDueInMillis)
      assert.isAbove(leaseEnd, 9 * minute)
      assert.isBelow(leaseEnd, 10 * minute + 1_000)

      yield* insertDelivery("retry", { dueInMinutes: 3 })
      const retry = Option.getOrThrow(yield* store.nextDueInMillis)
      assert.isAbove(retry, 2 * minute)
      assert.isBelow(retry, 3 * minute + 1_000)

      // A disabled webhook's deliveries wait for it to be enabled again (which wakes the worker).
      yield* sql`UPDATE webhooks SET enabled = false WHERE id = 'hook-due'`
      assert.deepStrictEqual(yield* store.nextDueInMillis, Option.none())
    }))
})
