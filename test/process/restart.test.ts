/**
 * The service as a real process: banks survive a restart, an operation interrupted by SIGKILL completes
 * exactly once after restart, and an unreachable PostgreSQL URL is a clear start-up error without the password.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { databaseTier, freshServiceEnv } from "../support/TestDatabase.ts"
import { freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { eventuallyAsync } from "../support/Eventually.ts"

const fixture = "test/fixtures/serve-with-durable-task.ts"

const tierEnv = () => freshServiceEnv()

const getJson = (url: string) => Effect.promise(() => fetch(url).then((response) => response.json() as Promise<any>))

const pollOperation = (url: string, predicate: (operation: any) => boolean) =>
  eventuallyAsync(
    () =>
      fetch(`${url}/v1/default/banks/durable/operations`).then((r) => r.json() as Promise<any>).then((list) =>
        list.operations?.[0]
      ),
    (operation) => operation !== undefined && predicate(operation),
    "60 seconds",
    { what: "the operation's expected state", interval: "50 millis" }
  )

describe("process", () => {
  it.live(
    "an operation killed mid-run completes exactly once after restart; banks persist",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const env = { ...tierEnv(), SERVICE_API_PORT: String(yield* freePort) }
        const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`

        const first = yield* spawnService(fixture, { ...env, ENGRAM_FIXTURE_SUBMIT_BANK: "durable" })
        yield* waitForHealth(url, first)
        yield* Effect.promise(() =>
          fetch(`${url}/v1/default/banks/durable`, {
            method: "PUT",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: "Durable" })
          })
        )
        const running = yield* pollOperation(url, (operation) => operation.status === "running")
        first.process.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)

        const second = yield* spawnService(fixture, env)
        yield* waitForHealth(url, second)
        const banks = yield* getJson(`${url}/v1/default/banks`)
        assert.deepStrictEqual(banks.banks.map((bank: any) => bank.name), ["Durable"])
        const done = yield* pollOperation(url, (operation) => operation.status === "completed")
        assert.strictEqual(done.id, running.id)
        const detail = yield* getJson(`${url}/v1/default/banks/durable/operations/${done.id}`)
        assert.strictEqual(detail.attempts, 2)
        const result = yield* getJson(`${url}/v1/default/banks/durable/operations/${done.id}/result`)
        assert.deepStrictEqual(result.result, { effects: 1 })
        const list = yield* getJson(`${url}/v1/default/banks/durable/operations`)
        assert.strictEqual(list.operations.length, 1)
      })),
    120_000
  )

  it.live(
    "an async retain batch killed mid-way stores every item exactly once after restart",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const env = {
          ...tierEnv(),
          SERVICE_API_PORT: String(yield* freePort),
          // Exact memory counts: no observations consolidated in the background.
          SERVICE_API_ENABLE_OBSERVATIONS: "false"
        }
        const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
        // 24 sub-batches of 25: a bank's actor runs up to 500 queued items together (their writes grouped), so two
        // runs of them, and the kill falls between writes of the batch.
        const items = Array.from({ length: 600 }, (_, n) => ({
          content: `Reading ${n}: sensor ${n} in greenhouse ${n % 13} measured ${(n * 7) % 31} degrees.`,
          metadata: { n: String(n) }
        }))

        const first = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, first)
        const accepted = yield* Effect.promise(() =>
          fetch(`${url}/v1/default/banks/batch/memories`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ items, async: true })
          }).then((response) => response.json() as Promise<any>)
        )
        const operationUrl = `${url}/v1/default/banks/batch/operations/${accepted.operation_id}`
        // Kill once some sub-batches are done and others are not.
        const detailOf = () => fetch(operationUrl).then((r) => r.json() as Promise<any>)
        yield* eventuallyAsync(
          detailOf,
          (detail) => {
            const done = detail.child_operations.filter((child: any) => child.status === "completed").length
            return done >= 1 && done < detail.child_operations.length - 2
          },
          "60 seconds",
          { what: "the batch in its middle", interval: "10 millis" }
        )
        first.process.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)

        const second = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, second)
        const done = yield* eventuallyAsync(
          detailOf,
          (detail) => detail.status === "completed" || detail.status === "failed",
          "90 seconds",
          { what: "the batch finished after restart", interval: "50 millis" }
        )
        assert.strictEqual(done.status, "completed", JSON.stringify(done))
        const stored = yield* getJson(`${url}/v1/default/banks/batch/memories/list?limit=1000`)
        assert.strictEqual(stored.total, items.length)
        const seen = stored.items.map((item: any) => Number(item.metadata.n)).sort((a: number, b: number) => a - b)
        assert.deepStrictEqual(seen, items.map((_, n) => n))
      })),
    180_000
  )

  it.live(
    "a SIGKILL while the bank's brain compacts loses nothing; the next start rebuilds it",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const env = {
          ...tierEnv(),
          SERVICE_API_PORT: String(yield* freePort),
          SERVICE_API_ENABLE_OBSERVATIONS: "false"
        }
        const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
        const bank = `${url}/v1/default/banks/brain`
        const post = (path: string, body: unknown) =>
          Effect.promise(() =>
            fetch(`${bank}${path}`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(body)
            }).then(async (response) => ({ status: response.status, body: await response.json() as any }))
          )
        const turn = (n: number) => ({
          content: `Visit ${n}: Noor walked the dog ${
            n % 7 === 0 ? "Biscuit" : "Pepper"
          } along the canal past lock ${n}.`,
          metadata: { n: String(n) }
        })

        const first = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, first)
        let acknowledged = 0
        // A small brain first, then writes until the delta outgrows a quarter of it and a compaction starts.
        for (let batch = 0; batch < 40 && !first.output().includes("compacting the brain of bank brain"); batch++) {
          const items = Array.from({ length: 20 }, (_, offset) => turn(batch * 20 + offset))
          const retained = yield* post("/memories", { items })
          assert.strictEqual(retained.status, 200, JSON.stringify(retained.body))
          acknowledged += items.length
          const recalled = yield* post("/memories/recall", { query: `canal lock ${batch * 20}` })
          assert.strictEqual(recalled.status, 200)
        }
        assert.include(first.output(), "compacting the brain of bank brain")
        first.process.kill("SIGKILL")
        yield* Effect.promise(() => first.exited)

        const second = yield* spawnService("src/main.ts", env)
        yield* waitForHealth(url, second)
        const stored = yield* getJson(`${bank}/memories/list?limit=1000`)
        const seen = new Set(stored.items.map((item: any) => Number(item.metadata.n)))
        assert.strictEqual(seen.size, acknowledged)
        assert.strictEqual(stored.total, stored.items.length)
        const recalled = yield* post("/memories/recall", { query: "Biscuit walked along the canal past lock 7" })
        assert.include(recalled.body.results.map((result: any) => result.text).join(" "), "lock 7")
      })),
    180_000
  )

  it.live.skipIf(databaseTier !== "pglite")(
    "an unreachable database URL fails start-up clearly, never falling back",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const port = yield* freePort
        const child = yield* spawnService("src/main.ts", {
          SERVICE_API_PORT: String(port),
          SERVICE_API_DATABASE_URL: "postgres://engram:s3cr3t-pw@127.0.0.1:1/engram"
        })
        const code = yield* Effect.promise(() => child.exited)
        assert.notStrictEqual(code, 0)
        assert.include(child.output(), "127.0.0.1:1")
        assert.notInclude(child.output(), "s3cr3t-pw")
        const listening = yield* Effect.promise(() =>
          fetch(`http://127.0.0.1:${port}/health`).then(() => true, () => false)
        )
        assert.isFalse(listening)
      })),
    60_000
  )
})
