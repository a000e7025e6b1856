/**
 * Webhook delivery survives the process: a delivery in flight when the service is killed (the receiver never
 * answered) goes out again after a restart, with the same event id and signature.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { verify } from "../../src/webhooks/WebhookPayload.ts"
import { freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { freshServiceEnv } from "../support/TestDatabase.ts"
import { startReceiver } from "../support/WebhookReceiver.ts"
import { eventuallyAsync } from "../support/TestTasks.ts"

const tierEnv = () => freshServiceEnv()

const call = (url: string, method: string, body?: unknown) =>
  Effect.promise(() =>
    fetch(url, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))
  )

const until = <A>(probe: () => Promise<A>, check: (value: A) => boolean, what: string) =>
  eventuallyAsync(probe, check, "60 seconds", { what, interval: "50 millis" })

describe("process", () => {
  it.live(
    "a delivery in flight when the process is killed is delivered after restart",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const receiver = yield* startReceiver()
        receiver.setFallback({ hang: true })
        const env = { ...tierEnv(), SERVICE_API_PORT: String(yield* freePort) }
        const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
        const bank = `${url}/v1/default/banks/hooked`

        const first = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, first)
        assert.strictEqual((yield* call(bank, "PUT", {})).status, 200)
        const hook = yield* call(`${bank}/webhooks`, "POST", {
          url: `${receiver.url}/events`,
          secret: "restart-secret",
          event_types: ["retain.completed"],
          http_config: { timeout_seconds: 60 }
        })
        assert.strictEqual(hook.status, 201)
        const retained = yield* call(`${bank}/memories`, "POST", {
          items: [{ content: "The lighthouse keeper logged a storm on the night of the ninth." }]
        })
        assert.strictEqual(retained.status, 200)
        yield* until(async () => receiver.received.length, (count) => count === 1, "the first attempt")
        first.process.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)

        receiver.setFallback({ status: 204 })
        const second = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, second)
        yield* until(async () => receiver.received.length, (count) => count === 2, "the delivery after restart")
        const [lost, delivered] = receiver.received as [typeof receiver.received[0], typeof receiver.received[0]]
        assert.strictEqual(delivered.rawBody, lost.rawBody)
        assert.strictEqual(delivered.body.event, "retain.completed")
        assert.strictEqual(delivered.body.bank_id, "hooked")
        assert.isTrue(verify("restart-secret", delivered.rawBody, delivered.headers["x-engram-signature"] as string))

        const list = yield* until(
          () => fetch(`${bank}/webhooks/${hook.body.id}/deliveries`).then((r) => r.json() as Promise<any>),
          (page) => page.items[0]?.status === "completed",
          "the delivery to be recorded"
        )
        assert.strictEqual(list.items.length, 1)
        assert.deepStrictEqual(list.items[0].attempt_history.map((a: any) => a.status_code), [204])
      })),
    180_000
  )
})
