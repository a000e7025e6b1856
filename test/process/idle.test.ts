/**
 * Idle is idle: the real server, as a child process with offline defaults, uses under 2 % of a core over 10 idle
 * seconds — with no webhook, and after a webhook delivery — and still delivers the next event at once, not on
 * the delivery worker's safety poll. One server per database tier of the run (PGlite, and PostgreSQL when the run
 * has it), started side by side and measured over the same windows: the file runs once, on the PGlite project, since
 * most of its time is waiting (settling and the idle windows), which a second run per tier would only repeat.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { type Child, freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { cpuSeconds } from "../support/ProcessCpu.ts"
import { databaseTier, freshServiceEnv, runTiers } from "../support/TestDatabase.ts"
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

const call = (url: string, method: string, body?: unknown) =>
  Effect.promise(() =>
    fetch(url, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))
  )

const until = <A>(probe: () => Promise<A>, check: (value: A) => boolean, what: string) =>
  eventuallyAsync(probe, check, "60 seconds", { what, interval: "50 millis" })

interface Server {
  readonly tier: "pglite" | "postgres"
  readonly url: string
  readonly bank: string
  readonly child: Child
  readonly receiver: WebhookReceiver
}

class IdleServers extends Context.Service<IdleServers, ReadonlyArray<Server>>()("test/process/IdleServers") {}

const startServer = (tier: string) =>
  Effect.gen(function*() {
    const receiver = yield* startReceiver()
    const env = { ...freshServiceEnv({}, tier), SERVICE_API_PORT: String(yield* freePort) }
    const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
    const bank = `${url}/v1/default/banks/idle`
    const child = yield* spawnService("src/main.ts", env)
    yield* waitForHealth(url, child)
    assert.strictEqual((yield* call(bank, "PUT", {})).status, 200)
    return { tier: tier === "pglite" ? "pglite" : "postgres", url, bank, child, receiver } satisfies Server
  })

/** One server per tier for both cases (start-up and settling take most of the time): healthy, one bank, settled. */
const IdleServersLive = Layer.effect(
  IdleServers,
  Effect.gen(function*() {
    const servers = yield* Effect.forEach(runTiers(), startServer, { concurrency: "unbounded" })
    yield* Effect.sleep(settle)
    return servers
  })
)

/** Each server's share of one core over the same idle window; each must still be alive and answering afterwards. */
const idleCpuShares = Effect.gen(function*() {
  const servers = yield* IdleServers
  const before = servers.map((server) => cpuSeconds(server.child.process.pid!))
  // The window itself is the measurement: nothing to wait on but time.
  yield* Effect.sleep(idleWindow)
  const shares = servers.map((server, i) =>
    (cpuSeconds(server.child.process.pid!) - before[i]!) /
    Duration.toSeconds(idleWindow)
  )
  for (const server of servers) {
    assert.isNull(
      server.child.process.exitCode,
      `${server.tier}: exited during the idle window:\n${server.child.output()}`
    )
    assert.strictEqual((yield* call(`${server.url}/health`, "GET")).status, 200)
  }
  return servers.map((server, i) => ({ tier: server.tier, share: shares[i]! }))
})

const assertIdle = (shares: ReadonlyArray<{ readonly tier: string; readonly share: number }>) => {
  for (const { tier, share } of shares) {
    assert.isBelow(share, idleShare, `${tier}: idle CPU ${(share * 100).toFixed(1)} % of a core`)
  }
}

/** Waits until the bank has no pending or running operation (the consolidation a retain queues). */
const backgroundDone = (server: Server) =>
  until(
    () => fetch(`${server.bank}/operations`).then((r) => r.json() as Promise<any>),
    (list) =>
      list.operations.every((operation: any) => operation.status !== "pending" && operation.status !== "running"),
    `${server.tier}: background operations to finish`
  )

const retainOne = (server: Server, content: string) =>
  Effect.gen(function*() {
    const retained = yield* call(`${server.bank}/memories`, "POST", { items: [{ content }] })
    assert.strictEqual(retained.status, 200)
    return Date.now()
  })

/** A webhook on the bank, one retain, its delivery recorded, and the bank's background work done. */
const deliverOnce = (server: Server) =>
  Effect.gen(function*() {
    const hook = yield* call(`${server.bank}/webhooks`, "POST", {
      url: `${server.receiver.url}/events`,
      event_types: ["retain.completed"]
    })
    assert.strictEqual(hook.status, 201)
    yield* retainOne(server, "The night ferry left the harbour at eleven with the mail on board.")
    yield* until(async () => server.receiver.received.length, (count) =>
      count === 1, `${server.tier}: the first delivery`)
    yield* until(
      () =>
        fetch(`${server.bank}/webhooks/${hook.body.id}/deliveries`).then((r) =>
          r.json() as Promise<any>
        ),
      (page) => page.items[0]?.status === "completed",
      `${server.tier}: the delivery to be recorded`
    )
    yield* backgroundDone(server)
  })

/**
 * Still working, and woken by the write: each delivery arrives well inside the 5 s safety poll (three in a row, so a
 * worker that only polled would be caught with near certainty).
 */
const deliversPromptly = (server: Server) =>
  Effect.gen(function*() {
    for (
      const [n, content] of [
        "The ferry's captain noted fog near the lighthouse.",
        "A crate of oranges was unloaded at the north pier.",
        "The harbour master closed the port for the storm."
      ].entries()
    ) {
      const retained = yield* retainOne(server, content)
      const arrived = (yield* until(async () => server.receiver.received[n + 1], (request) =>
        request !== undefined, `${server.tier}: a delivery`))!
      assert.strictEqual(arrived.body.event, "retain.completed")
      assert.isBelow(
        arrived.at - retained,
        promptDelivery,
        `${server.tier}: delivery ${n + 1} took ${arrived.at - retained} ms`
      )
    }
  })

// Once per run, on the PGlite project: the servers of every tier are started here (see the header). A skipped suite
// does not build its layer, so the PostgreSQL project starts nothing.
const measuredHere = process.platform === "linux" && databaseTier === "pglite"

describe.skipIf(!measuredHere)("idle servers of every tier", () => {
  layer(IdleServersLive, { excludeTestServices: true, timeout: "3 minutes" })("side by side", (it) => {
    it.effect("use under 2 % of a core over 10 idle seconds", () => Effect.map(idleCpuShares, assertIdle), 60_000)

    it.effect(
      "use under 2 % of a core after a webhook delivery, and deliver the next event at once",
      () =>
        Effect.gen(function*() {
          const servers = yield* IdleServers
          yield* Effect.forEach(servers, deliverOnce, { concurrency: "unbounded", discard: true })
          assertIdle(yield* idleCpuShares)
          yield* Effect.forEach(servers, deliversPromptly, { concurrency: "unbounded", discard: true })
        }),
      90_000
    )
  })
})
