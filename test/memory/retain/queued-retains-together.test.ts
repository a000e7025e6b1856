/**
 * Queued retains run together (`RunsTogether`, `GroupCommit`), on both tiers: retain operations waiting one behind
 * another in a bank's queue are claimed at once and their writes share transactions, yet each settles on its own
 * with its own result, and each memory carries the id of the operation that queued it. A retain naming a document
 * stops the run: it is claimed alone, after the ones before it and before the ones after it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { BankActors } from "../../../src/bank/BankActors.ts"
import { OperationStore } from "../../../src/bank/OperationStore.ts"
import { bankPath } from "../../support/HttpCalls.ts"
import { eventually } from "../../support/TestTasks.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "queued-together"
const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Perth", "Accra", "Tbilisi"]
const turn = (n: number) => `Priya flew to ${cities[n % cities.length]} on day ${n} to meet supplier number ${n}.`

layer(testApp({ enableObservations: false }), { excludeTestServices: true })("queued retains together", (it) => {
  it.effect("run at once and share transactions; each settles alone; a document retain is claimed alone", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const store = yield* OperationStore
      const actors = yield* BankActors
      const sql = yield* SqlClient.SqlClient
      const created = yield* server.request("POST", `${bankPath(bank)}/memories`, {
        json: { items: [{ content: turn(999) }] }
      })
      assert.strictEqual(created.status, 200, created.text)

      // Queued without waking the bank's actor, so all of them wait when it looks: 8 plain, 1 naming a document,
      // 3 plain. Each plain one carries three items.
      const queue = (items: ReadonlyArray<Record<string, unknown>>) =>
        store.create({ bankId: bank, taskType: "batch_retain", payload: { items }, itemsCount: items.length })
      const plain = (first: number) => queue([0, 1, 2].map((k) => ({ content: turn(first + k) })))
      const before = yield* Effect.forEach([0, 3, 6, 9, 12, 15, 18, 21], plain)
      const document = yield* queue([{ content: turn(100), document_id: "trip-notes" }])
      const after = yield* Effect.forEach([30, 33, 36], plain)
      yield* actors.wake(bank)

      const all = [...before, document, ...after].map((operation) => operation.id)
      const rows = yield* eventually(
        sql<{ id: string; status: string; startedAt: Date; result: { memories_created: number } | null }>`
          SELECT id, status, started_at, result FROM operations WHERE id IN ${sql.in(all)}`,
        (found) => found.length === all.length && found.every((row) => row.status === "completed"),
        "30 seconds",
        { what: "every queued retain completed", interval: "50 millis" }
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      const started = (ids: ReadonlyArray<{ readonly id: string }>) =>
        new Set(ids.map((operation) => byId.get(operation.id)!.startedAt.getTime()))
      // The first of a run is claimed as always, the ones queued behind it in one more statement: one start time.
      assert.strictEqual(started(before.slice(1)).size, 1, "the seven behind the first were claimed at once")
      assert.strictEqual(started(after.slice(1)).size, 1, "so were the two behind the first after the document")
      const documentStart = byId.get(document.id)!.startedAt.getTime()
      assert.isAbove(documentStart, Math.max(...started(before)), "the document retain came after the ones before it")
      assert.isAbove(Math.min(...started(after)), documentStart, "and before the ones after it")
      for (const id of all.filter((id) => id !== document.id)) {
        assert.strictEqual(byId.get(id)!.result?.memories_created, 3, "each operation answers for its own items")
      }

      // Each memory carries its own operation's id; the eight shared few transactions.
      const memories = yield* sql<{ text: string; operationId: string; createdAt: Date }>`
        SELECT text, operation_id, created_at FROM memory_units WHERE bank_id = ${bank} AND operation_id IS NOT NULL`
      const operationOf = new Map(memories.map((memory) => [memory.text, memory.operationId]))
      before.forEach((operation, index) => {
        for (let k = 0; k < 3; k++) assert.strictEqual(operationOf.get(turn(index * 3 + k)), operation.id)
      })
      assert.strictEqual(operationOf.get(turn(100)), document.id)
      const transactions = new Set(
        memories.filter((memory) => before.some((operation) => operation.id === memory.operationId))
          .map((memory) => memory.createdAt.getTime())
      )
      assert.isAtMost(transactions.size, 3, `eight queued retains written in ${transactions.size} transactions`)
    }))
})
