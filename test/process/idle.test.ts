/**
 * Idle is idle: the real server, as a child process with offline defaults, uses under 2 % of a core over 10 idle
 * seconds — with no webhook, and after a webhook delivery — and still delivers the next event at once, not on
 * the delivery worker's safety poll. Runs on every database tier, like the other process tests.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { type Child, freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { cpuSeconds } from "../support/ProcessCpu.ts"
import { freshServiceEnv } from "../support/TestDatabase.ts"
import { startReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import { eventuallyAsync } from "../support/TestTasks.ts"

/** The budget: 2 % of one core, over a window of 10 seconds. */
const idleWindow = Duration.seconds(10)
const idleShare = 0.02
/**
 * After start-up V8 compacts the heap a few times on its own (its "memory reducer", a one-off about 10 and 20 s
 * after the start-up allocations, some 0.3 s each); the window begins once that is over.
 */
const settle = Duration.seconds(30)
/** Well under the delivery worker's 5 s safety poll: a retain's delivery must come from the wake-up. */
const promptDelivery = 1_500

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

class IdleServer extends Context.Service<IdleServer, {
  readonly url: string
  readonly bank: string
  readonly child: Child
  readonly receiver: WebhookReceiver
}>()("test/process/IdleServer") {}

/** One server for both cases (start-up and settling take most of the time): healthy, one bank, settled. */
const IdleServerLive = Layer.effect(
  IdleServer,
  Effect.gen(function*() {
    const receiver = yield* startReceiver()
    const env = { ...tierEnv(), SERVICE_API_PORT: String(yield* freePort) }
    const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
    const bank = `${url}/v1/default/banks/idle`
    const child = yield* spawnService("src/main.ts", env)
    yield* waitForHealth(url, child)
    assert.strictEqual((yield* call(bank, "PUT", {})).status, 200)
    yield* Effect.sleep(settle)
    return { url, bank, child, receiver }
  })
)

/** The child's share of one core over the idle window; it must still be alive and answering afterwards. */
const idleCpuShare = Effect.gen(function*() {
  const { child, url } = yield* IdleServer
  const pid = child.process.pid!
  const before = cpuSeconds(pid)
  // The window itself is the measurement: nothing to wait on but time.
  yield* Effect.sleep(idleWindow)
  const used = cpuSeconds(pid) - before
  assert.isNull(child.process.exitCode, `the server exited during the idle window:\n${child.output()}`)
  assert.strictEqual((yield* call(`${url}/health`, "GET")).status, 200)
  return used / Duration.toSeconds(idleWindow)
})

/** Waits until the bank has no pending or running operation (the consolidation a retain queues). */
const backgroundDone = Effect.gen(function*() {
  const { bank } = yield* IdleServer
  yield* until(
    () => fetch(`${bank}/operations`).then((r) => r.json() as Promise<any>),
    (list) =>
      list.operations.every((operation: any) => operation.status !== "pending" && operation.status !== "running"),
    "background operations to finish"
  )
})

const retainOne = (content: string) =>
  Effect.gen(function*() {
    const { bank } = yield* IdleServer
    const retained = yield* call(`${bank}/memories`, "POST", { items: [{ content }] })
    assert.strictEqual(retained.status, 200)
    return Date.now()
  })

layer(IdleServerLive, { excludeTestServices: true, timeout: "3 minutes" })("an idle server", (it) => {
  it.effect.skipIf(process.platform !== "linux")(
    "uses under 2 % of a core over 10 idle seconds",
    () =>
      Effect.gen(function*() {
        const share = yield* idleCpuShare
        assert.isBelow(share, idleShare, `idle CPU ${(share * 100).toFixed(1)} % of a core`)
      }),
    60_000
  )

  it.effect.skipIf(process.platform !== "linux")(
    "uses under 2 % of a core after a webhook delivery, and delivers the next event at once",
    () =>
      Effect.gen(function*() {
        const { bank, receiver } = yield* IdleServer
        const hook = yield* call(`${bank}/webhooks`, "POST", {
          url: `${receiver.url}/events`,
          event_types: ["retain.completed"]
        })
        assert.strictEqual(hook.status, 201)
        yield* retainOne("The night ferry left the harbour at eleven with the mail on board.")
        yield* until(async () => receiver.received.length, (count) => count === 1, "the first delivery")
        yield* until(
          () => fetch(`${bank}/webhooks/${hook.body.id}/deliveries`).then((r) => r.json() as Promise<any>),
          (page) => page.items[0]?.status === "completed",
          "the delivery to be recorded"
        )
        yield* backgroundDone

        const share = yield* idleCpuShare
        assert.isBelow(share, idleShare, `idle CPU ${(share * 100).toFixed(1)} % of a core`)

        // Still working, and woken by the write: each delivery arrives well inside the 5 s safety poll (three in a
        // row, so a worker that only polled would be caught with near certainty).
        for (
          const [n, content] of [
            "The ferry's captain noted fog near the lighthouse.",
            "A crate of oranges was unloaded at the north pier.",
            "The harbour master closed the port for the storm."
          ].entries()
        ) {
          const retained = yield* retainOne(content)
          const arrived = (yield* until(async () => receiver.received[n + 1], (request) =>
            request !== undefined, "a delivery"))!
          assert.strictEqual(arrived.body.event, "retain.completed")
          assert.isBelow(arrived.at - retained, promptDelivery, `delivery ${n + 1} took ${arrived.at - retained} ms`)
        }
      }),
    90_000
  )
})
