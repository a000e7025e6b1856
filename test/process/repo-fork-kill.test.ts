/**
 * A fork copies in slices, each its own transaction: the service killed with SIGKILL half way through a fork comes
 * back with the target bank part-way (or not made yet), and the same fork call resumes and finishes it into a copy
 * equal to one made without a crash (or, when the kill came after the fork's last transaction, answers 409 and the
 * copy is already whole).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { freePort, spawnService, waitForHealth } from "../support/ChildService.ts"
import { call, facts, repoServiceEnv } from "../support/RepoKillFixtures.ts"

/** A bank's memory texts, sorted and joined (fork ids are new, texts are not). */
const texts = (url: string, bank: string) =>
  Effect.map(
    call(url, "GET", `/v1/default/banks/${bank}/memories/list?limit=1000`),
    (page) => page.items.map((item: any) => item.text).sort().join("\n")
  )

describe("memory repo fork", () => {
  it.live("SIGKILL mid-fork: the same fork call finishes it", () =>
    Effect.scoped(Effect.gen(function*() {
      // Small slices, so the fork of this bank is many transactions.
      const env = {
        ...repoServiceEnv(),
        SERVICE_API_PORT: String(yield* freePort),
        SERVICE_API_REPO_FORK_SLICE_ROWS: "100"
      }
      const url = `http://127.0.0.1:${env["SERVICE_API_PORT"]}`
      const first = yield* spawnService("src/main.ts", env)
      yield* waitForHealth(url, first)

      yield* call(url, "PUT", "/v1/default/banks/source", { name: "source" })
      yield* call(url, "POST", "/v1/default/banks/source/memories", { items: facts("a", 200) })
      const repo = yield* call(url, "POST", "/v1/default/banks/source/repos/enable", {})
      const expected = yield* texts(url, "source")

      // Time one fork, then kill the service half way through a second one.
      const started = performance.now()
      yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, { target_bank_id: "timed" })
      const took = performance.now() - started
      assert.strictEqual(yield* texts(url, "timed"), expected)
      const forking = fetch(`${url}/v1/default/repos/${repo.repo_id}/fork-bank`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ target_bank_id: "killed", target_bank_name: "Killed" })
      }).catch(() => undefined)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(5, took / 2))))
      first.process.kill("SIGKILL")
      yield* Effect.promise(() => first.exited)
      yield* Effect.promise(() => forking)

      const second = yield* spawnService("src/main.ts", env)
      yield* waitForHealth(url, second)
      const partial = yield* Effect.promise(() => fetch(`${url}/v1/default/banks/killed/memories/list?limit=1000`))
      const before = partial.status === 200 ? ((yield* Effect.promise(() => partial.json())) as any).items.length : -1
      yield* Effect.logInfo(
        `fork took ${Math.round(took)} ms; killed at half: ${before < 0 ? "no bank yet" : `${before} memories copied`}`
      )
      // The same call resumes a fork cut short; one the kill came too late for has finished (its bank exists: 409).
      const resumed = yield* Effect.promise(() =>
        fetch(`${url}/v1/default/repos/${repo.repo_id}/fork-bank`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ target_bank_id: "killed", target_bank_name: "Killed" })
        }).then(async (response) => ({ status: response.status, body: await response.json() as any }))
      )
      yield* Effect.logInfo(`the repeated fork call answered ${resumed.status}`)
      assert.include([200, 409], resumed.status)
      if (resumed.status === 200) {
        assert.strictEqual(resumed.body.bank_name, "Killed")
        assert.strictEqual(resumed.body.source_commit_id, repo.head_commit_id)
      }
      assert.strictEqual(yield* texts(url, "killed"), expected)
      const again = yield* Effect.promise(() =>
        fetch(`${url}/v1/default/repos/${repo.repo_id}/fork-bank`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ target_bank_id: "killed" })
        })
      )
      assert.strictEqual(again.status, 409, "a finished fork's bank exists")
      // The copy works as a bank: it recalls its memories.
      const recall = yield* call(url, "POST", "/v1/default/banks/killed/memories/recall", { query: "sensor in hall a" })
      assert.isAbove(recall.results.length, 0)
    })), 600_000)
})
