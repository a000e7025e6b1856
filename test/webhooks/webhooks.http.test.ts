/**
 * Webhooks over HTTP against receivers on loopback: registration and partial update (the secret never comes
 * back), signed delivery of consolidation, retain and operation-failure events, retries with backoff recorded
 * attempt by attempt, a dead receiver that does not slow retain or recall, paging, validation, and the
 * private-destination guard.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankEvents } from "../../src/events/BankEvents.ts"
import { Operations } from "../../src/bank/Operations.ts"
import { verify } from "../../src/webhooks/WebhookPayload.ts"
import { WebhookStore } from "../../src/webhooks/WebhookStore.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually, TestTaskHandlers } from "../support/TestTasks.ts"
import { startReceiver } from "../support/WebhookReceiver.ts"

const hooks = (bank: string) => `/v1/default/banks/${bank}/webhooks`
const fast = { retry_backoff_seconds: 0.05, retry_max_backoff_seconds: 1 }

/** Observations off unless asked: retain would otherwise queue consolidations whose events are not under test. */
const createBank = (bank: string, settings: Record<string, unknown> = { enable_observations: false }) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("PUT", `/v1/default/banks/${bank}`, { json: settings })
  })

const register = (bank: string, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const created = yield* server.request("POST", hooks(bank), { json: body })
    assert.strictEqual(created.status, 201, created.text)
    return created.body
  })

const deliveries = (bank: string, id: string, query = "") =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("GET", `${hooks(bank)}/${id}/deliveries${query}`)
  })

const retain = (bank: string, content: string, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const response = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
      json: { items: [{ content }], ...extra }
    })
    assert.strictEqual(response.status, 200, response.text)
    return response.body
  })

const fieldsOf = (response: { readonly body: any }) => response.body.errors.map((issue: any) => issue.field as string)

layer(testApp({}, TestTaskHandlers), { excludeTestServices: true })("webhooks", (it) => {
  it.effect("register, list, partial update and delete; the secret is never returned", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* createBank("wh-crud")
      const created = yield* register("wh-crud", {
        url: "http://127.0.0.1:9/hook",
        secret: "s3cret-signing-key",
        event_types: ["retain.completed", "operation.failed"],
        http_config: { headers: { Authorization: "Bearer tok-123", "X-Team": "memory" }, timeout_seconds: 5 }
      })
      assert.strictEqual(created.bank_id, "wh-crud")
      assert.strictEqual(created.secret, "********")
      assert.deepStrictEqual(created.event_types, ["retain.completed", "operation.failed"])
      assert.isTrue(created.enabled)
      assert.deepStrictEqual(created.http_config, {
        method: "POST",
        timeout_seconds: 5,
        headers: { Authorization: "********", "X-Team": "memory" },
        params: {},
        max_attempts: 8,
        retry_backoff_seconds: 5,
        retry_max_backoff_seconds: 600
      })

      const listed = yield* server.request("GET", hooks("wh-crud"))
      assert.deepStrictEqual(listed.body.items.map((hook: any) => hook.id), [created.id])
      assert.notInclude(listed.text, "s3cret-signing-key")
      assert.notInclude(listed.text, "tok-123")

      const disabled = yield* server.request("PATCH", `${hooks("wh-crud")}/${created.id}`, { json: { enabled: false } })
      assert.strictEqual(disabled.status, 200)
      assert.isFalse(disabled.body.enabled)
      assert.strictEqual(disabled.body.url, created.url)
      assert.strictEqual(disabled.body.secret, "********")
      assert.deepStrictEqual(disabled.body.event_types, created.event_types)
      assert.strictEqual(disabled.body.http_config.timeout_seconds, 5)

      const cleared = yield* server.request("PATCH", `${hooks("wh-crud")}/${created.id}`, {
        json: { secret: null, url: "https://example.invalid/other" }
      })
      assert.isNull(cleared.body.secret)
      assert.strictEqual(cleared.body.url, "https://example.invalid/other")
      assert.isFalse(cleared.body.enabled)

      const deleted = yield* server.request("DELETE", `${hooks("wh-crud")}/${created.id}`)
      assert.strictEqual(deleted.status, 200)
      assert.deepStrictEqual((yield* server.request("GET", hooks("wh-crud"))).body.items, [])
      const again = yield* server.request("DELETE", `${hooks("wh-crud")}/${created.id}`)
      assert.strictEqual(again.status, 404)
      assert.isString(again.body.detail)
      assert.strictEqual(
        (yield* server.request("PATCH", `${hooks("wh-crud")}/${created.id}`, { json: {} })).status,
        404
      )
      assert.strictEqual((yield* deliveries("wh-crud", created.id)).status, 404)
      const unknownBank = yield* server.request("GET", hooks("no-such-bank"))
      assert.strictEqual(unknownBank.status, 404)
      assert.include(unknownBank.body.detail, "no-such-bank")
    }))

  it.effect("a client that sends back what it read keeps the secret and credentials; http_config merges onto the current one", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* startReceiver()
      const events = yield* BankEvents
      yield* createBank("wh-roundtrip")
      const created = yield* register("wh-roundtrip", {
        url: `${receiver.url}/in`,
        secret: "round-trip-secret",
        http_config: {
          timeout_seconds: 5,
          headers: { Authorization: "Bearer tok-round", "X-Team": "memory" },
          params: { api_key: "param-key-123", source: "engram" }
        }
      })
      // Credential-named params are masked like credential headers.
      assert.deepStrictEqual(created.http_config.params, { api_key: "********", source: "engram" })
      const read = (yield* server.request("GET", hooks("wh-roundtrip"))).body.items[0]
      assert.notInclude(JSON.stringify(read), "param-key-123")

      const path = `${hooks("wh-roundtrip")}/${created.id}`
      const echoed = yield* server.request("PATCH", path, {
        json: { url: read.url, secret: read.secret, event_types: read.event_types, http_config: read.http_config }
      })
      assert.strictEqual(echoed.status, 200, echoed.text)
      const partial = yield* server.request("PATCH", path, {
        json: { http_config: { max_attempts: 3, headers: { "X-Extra": "1", "X-Team": null }, params: { page: "2" } } }
      })
      assert.strictEqual(partial.status, 200, partial.text)
      assert.deepStrictEqual(partial.body.http_config, {
        method: "POST",
        timeout_seconds: 5,
        headers: { Authorization: "********", "X-Extra": "1" },
        params: { api_key: "********", source: "engram", page: "2" },
        max_attempts: 3,
        retry_backoff_seconds: 5,
        retry_max_backoff_seconds: 600
      })

      // What goes out is still signed with the real secret and carries the real credentials.
      yield* events.emit("wh-roundtrip", "consolidation.completed", {})
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count === 1)
      const request = receiver.received[0]!
      assert.isTrue(verify("round-trip-secret", request.rawBody, request.headers["x-engram-signature"] as string))
      assert.strictEqual(request.headers["authorization"], "Bearer tok-round")
      assert.strictEqual(request.headers["x-extra"], "1")
      assert.isUndefined(request.headers["x-team"])
      const target = new URL(request.path, receiver.url)
      assert.strictEqual(target.pathname, "/in")
      assert.deepStrictEqual(Object.fromEntries(target.searchParams), {
        api_key: "param-key-123",
        source: "engram",
        page: "2"
      })
    })))

  it.effect("saving a webhook deleted since it was read finds nothing, so PATCH answers 404 instead of crashing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const store = yield* WebhookStore
      yield* createBank("wh-vanish")
      const created = yield* register("wh-vanish", { url: "http://127.0.0.1:9/hook" })
      const record = yield* store.find("wh-vanish", created.id)
      assert.isTrue(Option.isSome(record))
      yield* server.request("DELETE", `${hooks("wh-vanish")}/${created.id}`)
      assert.isTrue(Option.isNone(yield* store.save(Option.getOrThrow(record))))
    }))

  it.effect("bad input answers 400 naming the field", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* createBank("wh-bad")
      const ftp = yield* server.request("POST", hooks("wh-bad"), { json: { url: "ftp://example.com/x" } })
      assert.strictEqual(ftp.status, 400)
      assert.deepStrictEqual(fieldsOf(ftp), ["url"])
      const unknownEvent = yield* server.request("POST", hooks("wh-bad"), {
        json: { url: "http://example.com/x", event_types: ["memory.exploded"] }
      })
      assert.strictEqual(unknownEvent.status, 400)
      assert.match(fieldsOf(unknownEvent)[0], /^event_types/)
      const timeout = yield* server.request("POST", hooks("wh-bad"), {
        json: { url: "http://example.com/x", http_config: { timeout_seconds: 0 } }
      })
      assert.deepStrictEqual(fieldsOf(timeout), ["http_config.timeout_seconds"])
      const reserved = yield* server.request("POST", hooks("wh-bad"), {
        json: { url: "http://example.com/x", http_config: { headers: { "X-Engram-Signature": "forged" } } }
      })
      assert.deepStrictEqual(fieldsOf(reserved), ["http_config.headers"])

      const hook = yield* register("wh-bad", { url: "http://example.com/x" })
      assert.deepStrictEqual(hook.event_types, ["consolidation.completed"])
      const tooMany = yield* deliveries("wh-bad", hook.id, "?limit=500")
      assert.strictEqual(tooMany.status, 400)
      assert.deepStrictEqual(fieldsOf(tooMany), ["limit"])
      // Date.parse takes all of these; PostgreSQL would not, so each must be a 400 rather than a 500.
      for (const cursor of ["yesterday", "1", "March 7", "2024-02-30T00:00:00Z", "2024-01-01 10:00"]) {
        const badCursor = yield* deliveries("wh-bad", hook.id, `?cursor=${encodeURIComponent(cursor)}`)
        assert.strictEqual(badCursor.status, 400, cursor)
        assert.deepStrictEqual(fieldsOf(badCursor), ["cursor"])
      }
      const isoCursor = yield* deliveries(
        "wh-bad",
        hook.id,
        `?cursor=${encodeURIComponent("2030-01-01T00:00:00.123456+02:00")}`
      )
      assert.strictEqual(isoCursor.status, 200, isoCursor.text)
      const badPatch = yield* server.request("PATCH", `${hooks("wh-bad")}/${hook.id}`, {
        json: { url: "file:///etc/passwd" }
      })
      assert.strictEqual(badPatch.status, 400)
      assert.deepStrictEqual(fieldsOf(badPatch), ["url"])
    }))

  it.effect("a receiver registered for consolidation.completed gets it with a signature it can verify", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const events = yield* BankEvents
      yield* createBank("wh-sign")
      const hook = yield* register("wh-sign", {
        url: `${receiver.url}/hooks/engram`,
        secret: "shared-secret",
        event_types: ["consolidation.completed"],
        http_config: { params: { source: "engram" } }
      })
      yield* events.emit("wh-sign", "consolidation.completed", { operation_id: "op-1", observations_created: 2 })
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count === 1)
      const request = receiver.received[0]!
      assert.strictEqual(request.path, "/hooks/engram?source=engram")
      assert.strictEqual(request.headers["content-type"], "application/json")
      assert.strictEqual(request.headers["x-engram-event"], "consolidation.completed")
      assert.isTrue(verify("shared-secret", request.rawBody, request.headers["x-engram-signature"] as string))
      assert.isFalse(verify("another-secret", request.rawBody, request.headers["x-engram-signature"] as string))
      assert.strictEqual(request.body.event, "consolidation.completed")
      assert.strictEqual(request.body.bank_id, "wh-sign")
      assert.strictEqual(request.body.operation_id, "op-1")
      assert.strictEqual(request.body.status, "completed")
      assert.strictEqual(request.body.id, request.headers["x-engram-event-id"])
      assert.isFalse(Number.isNaN(Date.parse(request.body.timestamp)))
      assert.deepStrictEqual(request.body.data, { operation_id: "op-1", observations_created: 2 })

      const list = yield* eventually(deliveries("wh-sign", hook.id), (r) => r.body.items[0]?.status === "completed")
      const delivery = list.body.items[0]
      assert.strictEqual(delivery.attempts, 1)
      assert.strictEqual(delivery.event_type, "consolidation.completed")
      assert.strictEqual(delivery.last_response_status, 200)
      assert.strictEqual(delivery.attempt_history[0].status_code, 200)
      assert.isNull(delivery.next_retry_at)
      assert.deepStrictEqual(delivery.payload, request.body)
      // Events the webhook did not subscribe to are not delivered.
      yield* events.emit("wh-sign", "operation.failed", { operation_id: "op-2" })
      // The outbox is written when the event is emitted: no row, no delivery, however long one waits.
      assert.strictEqual((yield* deliveries("wh-sign", hook.id)).body.items.length, 1)
      yield* Effect.sleep(Duration.millis(200))
      assert.strictEqual(receiver.received.length, 1)
    })))

  it.effect("a consolidation through the consolidate route reaches the receiver, signed", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* startReceiver()
      yield* createBank("wh-consolidate", {})
      yield* register("wh-consolidate", { url: receiver.url, secret: "consolidation-secret" })
      yield* retain("wh-consolidate", "Grace Hopper found a moth in the Mark II relay in 1947.")
      const queued = yield* server.request("POST", "/v1/default/banks/wh-consolidate/consolidate")
      assert.strictEqual(queued.status, 200, queued.text)
      const operationId = queued.body.operation_id
      assert.isString(operationId)
      const received = yield* eventually(
        Effect.sync(() => receiver.received.find((r) => r.body.operation_id === operationId)),
        (found) => found !== undefined,
        Duration.seconds(30)
      )
      assert.strictEqual(received!.body.event, "consolidation.completed")
      assert.strictEqual(received!.body.bank_id, "wh-consolidate")
      assert.isTrue(
        verify("consolidation-secret", received!.rawBody, received!.headers["x-engram-signature"] as string)
      )
      assert.isTrue(receiver.received.every((r) => r.body.event === "consolidation.completed"))
    })))

  it.effect("a receiver answering 500 twice then 200 gets the event on the third attempt; all three are listed", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* startReceiver()
      receiver.script({ status: 500 }, { status: 500 })
      yield* createBank("wh-retry")
      const hook = yield* register("wh-retry", {
        url: receiver.url,
        secret: "k",
        event_types: ["retain.completed"],
        http_config: fast
      })
      yield* retain("wh-retry", "Ada Lovelace wrote the first program for the Analytical Engine in 1843.")
      const list = yield* eventually(deliveries("wh-retry", hook.id), (r) => r.body.items[0]?.status === "completed")
      const delivery = list.body.items[0]
      assert.strictEqual(delivery.attempts, 3)
      assert.deepStrictEqual(delivery.attempt_history.map((a: any) => a.status_code), [500, 500, 200])
      assert.deepStrictEqual(delivery.attempt_history.map((a: any) => a.attempt), [1, 2, 3])
      assert.deepStrictEqual(delivery.attempt_history.map((a: any) => a.error), ["HTTP 500", "HTTP 500", null])
      for (const attempt of delivery.attempt_history) assert.isAtLeast(attempt.duration_ms, 0)
      // The same signed bytes went out every time, after a growing wait.
      assert.strictEqual(receiver.received.length, 3)
      assert.strictEqual(new Set(receiver.received.map((r) => r.rawBody)).size, 1)
      for (const r of receiver.received) {
        assert.isTrue(verify("k", r.rawBody, r.headers["x-engram-signature"] as string))
      }
      const [first, second, third] = receiver.received.map((r) => r.at) as [number, number, number]
      assert.isAtLeast(second - first, 40)
      assert.isAtLeast(third - second, 90)
      const payload = receiver.received[0]!.body
      assert.strictEqual(payload.event, "retain.completed")
      assert.isNull(payload.operation_id)
      assert.isAtLeast(payload.data.memories_created, 1)
      assert.strictEqual(payload.data.items_count, 1)
    })))

  it.effect("a delivery that keeps failing stops at max_attempts and is marked failed", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* startReceiver()
      receiver.setFallback({ status: 503 })
      const events = yield* BankEvents
      yield* createBank("wh-dead")
      const hook = yield* register("wh-dead", {
        url: receiver.url,
        event_types: ["consolidation.completed"],
        http_config: { ...fast, max_attempts: 2 }
      })
      yield* events.emit("wh-dead", "consolidation.completed", {})
      const list = yield* eventually(deliveries("wh-dead", hook.id), (r) => r.body.items[0]?.status === "failed")
      assert.strictEqual(list.body.items[0].attempts, 2)
      assert.strictEqual(list.body.items[0].last_error, "HTTP 503")
      yield* Effect.sleep(Duration.millis(300))
      assert.strictEqual(receiver.received.length, 2)
    })))

  it.effect("an unreachable receiver is recorded as a transport error and retried", () =>
    Effect.scoped(Effect.gen(function*() {
      const events = yield* BankEvents
      const closed = yield* Effect.scoped(Effect.map(startReceiver(), (receiver) => receiver.url))
      yield* createBank("wh-down")
      const hook = yield* register("wh-down", {
        url: closed,
        event_types: ["consolidation.completed"],
        http_config: { ...fast, max_attempts: 2 }
      })
      yield* events.emit("wh-down", "consolidation.completed", {})
      const list = yield* eventually(deliveries("wh-down", hook.id), (r) => r.body.items[0]?.status === "failed")
      const history = list.body.items[0].attempt_history
      assert.strictEqual(history.length, 2)
      assert.isNull(history[0].status_code)
      assert.include(history[0].error, "ECONNREFUSED")
    })))

  it.effect("a receiver that never answers does not slow retain or recall", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* startReceiver()
      receiver.setFallback({ hang: true })
      yield* createBank("wh-slow")
      const hook = yield* register("wh-slow", {
        url: receiver.url,
        event_types: ["retain.completed"],
        // Longer than the test may run: no attempt can end while it does.
        http_config: { timeout_seconds: 300 }
      })
      for (let n = 0; n < 10; n++) yield* retain("wh-slow", `Sensor ${n} in greenhouse ${n} read ${20 + n} degrees.`)
      const recall = yield* server.request("POST", "/v1/default/banks/wh-slow/memories/recall", {
        json: { query: "greenhouse sensor degrees" }
      })
      assert.strictEqual(recall.status, 200)
      assert.isAbove(recall.body.results.length, 0)
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count >= 8)
      const list = yield* deliveries("wh-slow", hook.id)
      assert.strictEqual(list.body.items.length, 10)
      // No attempt has ended, yet every retain and the recall answered: none of them waited for the receiver.
      // (No stopwatch: a slow machine changes nothing.)
      assert.isTrue(list.body.items.every((item: any) => item.status === "pending" && item.attempts === 0))
    })))

  it.effect("async retain and a failed operation are delivered with their operation ids", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const operations = yield* Operations
      yield* createBank("wh-ops")
      yield* register("wh-ops", { url: receiver.url, event_types: ["retain.completed", "operation.failed"] })
      const accepted = yield* retain("wh-ops", "The ferry to the island leaves at seven.", { async: true })
      const failing = yield* operations.submit({ bankId: "wh-ops", taskType: "test_fail", payload: {} })
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count === 2)
      const byEvent = Object.fromEntries(receiver.received.map((r) => [r.body.event, r.body]))
      assert.strictEqual(byEvent["retain.completed"].operation_id, accepted.operation_id)
      assert.strictEqual(byEvent["operation.failed"].operation_id, failing.id)
      assert.strictEqual(byEvent["operation.failed"].status, "failed")
      assert.strictEqual(byEvent["operation.failed"].data.task_type, "test_fail")
      assert.strictEqual(byEvent["operation.failed"].data.error_message, "the test task failed on purpose")
    })))

  it.effect("a disabled webhook gets nothing; re-emitting the same event id is delivered once", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* TestServer
      const receiver = yield* startReceiver()
      const events = yield* BankEvents
      yield* createBank("wh-once")
      const hook = yield* register("wh-once", { url: receiver.url, enabled: false })
      yield* events.emit("wh-once", "consolidation.completed", {}, "evt-1")
      yield* server.request("PATCH", `${hooks("wh-once")}/${hook.id}`, { json: { enabled: true } })
      yield* events.emit("wh-once", "consolidation.completed", {}, "evt-2")
      yield* events.emit("wh-once", "consolidation.completed", {}, "evt-2")
      // The outbox is written when the event is emitted: one row, so one delivery, however long one waits.
      assert.deepStrictEqual((yield* deliveries("wh-once", hook.id)).body.items.map((item: any) => item.event_id), [
        "evt-2"
      ])
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count >= 1)
      yield* Effect.sleep(Duration.millis(300))
      assert.deepStrictEqual(receiver.received.map((r) => r.body.id), ["evt-2"])
    })))

  it.effect("deliveries page newest first with next_cursor", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* startReceiver()
      const events = yield* BankEvents
      yield* createBank("wh-page")
      const hook = yield* register("wh-page", { url: receiver.url })
      for (let n = 1; n <= 5; n++) yield* events.emit("wh-page", "consolidation.completed", { n }, `page-${n}`)
      yield* eventually(Effect.sync(() => receiver.received.length), (count) => count === 5)
      const first = yield* deliveries("wh-page", hook.id, "?limit=2")
      assert.deepStrictEqual(first.body.items.map((item: any) => item.event_id), ["page-5", "page-4"])
      assert.strictEqual(first.body.next_cursor, first.body.items[1].created_at)
      const second = yield* deliveries(
        "wh-page",
        hook.id,
        `?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`
      )
      assert.deepStrictEqual(second.body.items.map((item: any) => item.event_id), ["page-3", "page-2"])
      const third = yield* deliveries(
        "wh-page",
        hook.id,
        `?limit=2&cursor=${encodeURIComponent(second.body.next_cursor)}`
      )
      assert.deepStrictEqual(third.body.items.map((item: any) => item.event_id), ["page-1"])
      assert.isNull(third.body.next_cursor)
      const all = yield* deliveries("wh-page", hook.id)
      assert.strictEqual(all.body.items.length, 5)
      assert.isNull(all.body.next_cursor)
    })))
})

layer(testApp({ webhookDenyPrivate: true }), { excludeTestServices: true })(
  "webhooks with private destinations denied",
  (it) => {
    it.effect("private, loopback and link-local destinations are refused at registration", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* createBank("wh-ssrf")
        for (
          const url of [
            "http://127.0.0.1:8080/hook",
            "http://localhost/hook",
            "http://[::1]/hook",
            "http://10.1.2.3/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://[::ffff:192.168.0.1]/hook"
          ]
        ) {
          const refused = yield* server.request("POST", hooks("wh-ssrf"), { json: { url } })
          assert.strictEqual(refused.status, 400, url)
          assert.deepStrictEqual(fieldsOf(refused), ["url"])
          assert.include(refused.body.detail, "SERVICE_API_WEBHOOK_DENY_PRIVATE")
        }
        const publicAddress = yield* server.request("POST", hooks("wh-ssrf"), {
          json: { url: "https://93.184.216.34/hook" }
        })
        assert.strictEqual(publicAddress.status, 201)
      }))

    it.effect("a stored destination that is private is refused again at delivery", () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* startReceiver()
        const sql = yield* SqlClient.SqlClient
        const events = yield* BankEvents
        yield* createBank("wh-ssrf-2")
        // As if the host had resolved to a public address at registration and to loopback now.
        yield* sql`INSERT INTO webhooks (id, bank_id, url, event_types, http_config)
        VALUES ('hook-private', 'wh-ssrf-2', ${receiver.url}, ARRAY['consolidation.completed'],
          ${JSON.stringify({ retry_backoff_seconds: 0.05, max_attempts: 2 })}::jsonb)`
        yield* events.emit("wh-ssrf-2", "consolidation.completed", {})
        const list = yield* eventually(
          deliveries("wh-ssrf-2", "hook-private"),
          (r) => r.body.items[0]?.status === "failed"
        )
        assert.include(list.body.items[0].last_error, "SERVICE_API_WEBHOOK_DENY_PRIVATE")
        assert.strictEqual(receiver.received.length, 0)
      })))
  }
)
