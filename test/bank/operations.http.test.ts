/** Durable background operations over HTTP: lifecycle, results, batches, cancel, retry, circuit breaker. */
import { assert, layer } from "@effect/vitest"
import { Deferred, Duration, Effect } from "effect"
import { Operations } from "../../src/bank/Operations.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually, TestTaskHandlers, TestTasks } from "../support/TestTasks.ts"

const ops = (bank: string) => `/v1/default/banks/${bank}/operations`

const app = testApp({
  operationRetryBase: Duration.millis(5),
  circuitBreakerFailures: 3,
  // Long enough that a slow machine still reads the open circuit (three requests), short enough to wait out.
  circuitBreakerOpenFor: Duration.seconds(5),
  actorIdleTimeout: Duration.millis(300)
}, TestTaskHandlers)

const statusOf = (bank: string, id: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("GET", `${ops(bank)}/${id}`)
  })

layer(app, { excludeTestServices: true })("operations", (it) => {
  it.effect("an operation runs in the background to completion and its result is served", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const operations = yield* Operations
      yield* server.request("PUT", "/v1/default/banks/ops-a", { json: {} })
      const op = yield* operations.submit({
        bankId: "ops-a",
        taskType: "test_echo",
        payload: { hello: "world" },
        itemsCount: 1
      })
      const done = yield* eventually(statusOf("ops-a", op.id), (r) => r.body.status === "completed")
      assert.strictEqual(done.body.task_type, "test_echo")
      assert.strictEqual(done.body.attempts, 1)
      const result = yield* server.request("GET", `${ops("ops-a")}/${op.id}/result`)
      assert.deepStrictEqual(result.body.result, { echoed: { hello: "world" } })
      const list = yield* server.request("GET", ops("ops-a"))
      assert.strictEqual(list.body.operations[0].id, op.id)
      assert.deepStrictEqual(Object.keys(list.body.operations[0]).sort(), [
        "created_at",
        "document_id",
        "error_message",
        "id",
        "items_count",
        "status",
        "task_type"
      ])
      const filtered = yield* server.request("GET", `${ops("ops-a")}?status=failed`)
      assert.strictEqual(filtered.body.operations.length, 0)
      const badFilter = yield* server.request("GET", `${ops("ops-a")}?status=exploded`)
      assert.strictEqual(badFilter.status, 400)
      assert.include(badFilter.body.errors.map((e: any) => e.field), "status")
    }))

  it.effect("an unknown operation id reads as not_found", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-b", { json: {} })
      const missing = yield* server.request("GET", `${ops("ops-b")}/does-not-exist`)
      assert.strictEqual(missing.body.status, "not_found")
      const result = yield* server.request("GET", `${ops("ops-b")}/does-not-exist/result`)
      assert.strictEqual(result.status, 404)
      assert.isString(result.body.detail)
    }))

  it.effect("transient failures are retried with backoff inside one operation", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-c", { json: {} })
      const op = yield* operations.submit({ bankId: "ops-c", taskType: "test_flaky", payload: { key: "flaky-1" } })
      yield* eventually(statusOf("ops-c", op.id), (r) => r.body.status === "completed")
      const result = yield* server.request("GET", `${ops("ops-c")}/${op.id}/result`)
      assert.deepStrictEqual(result.body.result, { attempts: 3 })
    }))

  it.effect("a failed operation carries error_message; retry runs a new attempt", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-d", { json: {} })
      TestTasks.failing.value = true
      const op = yield* operations.submit({ bankId: "ops-d", taskType: "test_switch", payload: {} })
      const failed = yield* eventually(statusOf("ops-d", op.id), (r) => r.body.status === "failed")
      assert.strictEqual(failed.body.error_message, "dependency down")
      const stats = yield* server.request("GET", "/v1/default/banks/ops-d/stats")
      assert.strictEqual(stats.body.failed_operations, 1)

      // The dependency is back before the retry: the new attempt may start before the retry's answer arrives.
      TestTasks.failing.value = false
      const retried = yield* server.request("POST", `${ops("ops-d")}/${op.id}/retry`)
      assert.strictEqual(retried.status, 200)
      const done = yield* eventually(statusOf("ops-d", op.id), (r) => r.body.status === "completed")
      assert.strictEqual(done.body.attempts, 2)
      assert.strictEqual(done.body.error_message, null)
      const again = yield* server.request("POST", `${ops("ops-d")}/${op.id}/retry`)
      assert.strictEqual(again.status, 409)
      assert.include(again.body.detail, "completed")
    }))

  it.effect("cancel: a pending operation never runs; a running one is interrupted", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-e", { json: {} })
      const running = yield* operations.submit({ bankId: "ops-e", taskType: "test_block", payload: { key: "run-1" } })
      const queued = yield* operations.submit({ bankId: "ops-e", taskType: "test_echo", payload: {} })
      yield* eventually(statusOf("ops-e", running.id), (r) => r.body.status === "running")

      const cancelQueued = yield* server.request("DELETE", `${ops("ops-e")}/${queued.id}`)
      assert.strictEqual(cancelQueued.status, 200)
      assert.strictEqual(cancelQueued.body.status, "cancelled")
      const cancelRunning = yield* server.request("DELETE", `${ops("ops-e")}/${running.id}`)
      assert.strictEqual(cancelRunning.body.status, "cancelled")
      yield* eventually(Effect.sync(() => TestTasks.interrupted.has("run-1")), (yes) => yes)

      const final = yield* statusOf("ops-e", queued.id)
      assert.strictEqual(final.body.status, "cancelled")
      const twice = yield* server.request("DELETE", `${ops("ops-e")}/${queued.id}`)
      assert.strictEqual(twice.status, 409)
      const unknown = yield* server.request("DELETE", `${ops("ops-e")}/nope`)
      assert.strictEqual(unknown.status, 404)
    }))

  it.effect("a batch settles from its sub-batches and lists them as child operations", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-f", { json: {} })
      const batch = yield* operations.submit({
        bankId: "ops-f",
        taskType: "test_echo",
        payload: {},
        itemsCount: 5,
        children: [{ payload: { part: 1 }, itemsCount: 3 }, { payload: { part: 2 }, itemsCount: 2 }]
      })
      const done = yield* eventually(statusOf("ops-f", batch.id), (r) => r.body.status === "completed")
      assert.strictEqual(done.body.child_operations.length, 2)
      assert.deepStrictEqual(done.body.child_operations.map((c: any) => [c.sub_batch_index, c.items_count, c.status]), [
        [0, 3, "completed"],
        [1, 2, "completed"]
      ])
      const list = yield* server.request("GET", ops("ops-f"))
      assert.strictEqual(list.body.operations.length, 1)
    }))

  it.effect("repeated failures open the bank's circuit breaker, visible in status; it closes again", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-g", { json: {} })
      TestTasks.failing.value = true
      for (let i = 0; i < 3; i++) {
        const op = yield* operations.submit({ bankId: "ops-g", taskType: "test_switch", payload: {} })
        yield* eventually(statusOf("ops-g", op.id), (r) => r.body.status === "failed")
      }
      const open = yield* server.request("GET", ops("ops-g"))
      assert.strictEqual(open.body.worker.circuit_state, "open")
      assert.isTrue(open.body.worker.circuit_open)

      // While open, new work waits as pending instead of failing.
      TestTasks.failing.value = false
      const waiting = yield* operations.submit({ bankId: "ops-g", taskType: "test_switch", payload: {} })
      const early = yield* statusOf("ops-g", waiting.id)
      assert.strictEqual(early.body.status, "pending")
      yield* eventually(statusOf("ops-g", waiting.id), (r) => r.body.status === "completed")
      const closed = yield* server.request("GET", ops("ops-g"))
      assert.strictEqual(closed.body.worker.circuit_state, "closed")
    }))

  it.effect("idle actors passivate and wake again for new work", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-h", { json: {} })
      const first = yield* operations.submit({ bankId: "ops-h", taskType: "test_echo", payload: { n: 1 } })
      const done = (r: { readonly body: any }) => r.body.status === "completed" || r.body.status === "failed"
      assert.strictEqual((yield* eventually(statusOf("ops-h", first.id), done)).body.status, "completed")
      const idle = yield* eventually(server.request("GET", ops("ops-h")), (r) => r.body.worker.active === false)
      assert.isFalse(idle.body.worker.active, "the bank's actor passivated once idle")
      const second = yield* operations.submit({ bankId: "ops-h", taskType: "test_echo", payload: { n: 2 } })
      assert.strictEqual((yield* eventually(statusOf("ops-h", second.id), done)).body.status, "completed")
      const result = yield* operations.result("ops-h", second.id)
      assert.deepStrictEqual(result.result, { echoed: { n: 2 } }, "the woken actor ran the new work")
    }))

  it.effect("deleting a bank interrupts its running operation and removes its operations", () =>
    Effect.gen(function*() {
      const operations = yield* Operations
      const server = yield* TestServer
      yield* server.request("PUT", "/v1/default/banks/ops-i", { json: {} })
      const op = yield* operations.submit({ bankId: "ops-i", taskType: "test_block", payload: { key: "del-1" } })
      yield* eventually(statusOf("ops-i", op.id), (r) => r.body.status === "running")
      yield* server.request("DELETE", "/v1/default/banks/ops-i")
      yield* eventually(Effect.sync(() => TestTasks.interrupted.has("del-1")), (yes) => yes)
      const gone = yield* statusOf("ops-i", op.id)
      assert.strictEqual(gone.body.status, "not_found")
      const gate = TestTasks.blockers.get("del-1")
      if (gate) yield* Deferred.succeed(gate, undefined)
    }))
})
