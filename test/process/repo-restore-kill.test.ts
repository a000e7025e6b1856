/**
 * A memory repo restore is one transaction: the service killed with SIGKILL in the middle of a hard reset comes
 * back with the bank in the old state or the new one, never a mix. The kill lands halfway through a reset of
 * the same size that was timed just before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { call, facts, memoryIds, repoServiceEnv } from "../support/RepoKillFixtures.ts"

describe("memory repo restore", () => {
  it.live("SIGKILL mid-reset leaves the old state or the new one", () =>
    Effect.scoped(Effect.gen(function*() {
      const { url, first, restart } = yield* startService(repoServiceEnv())

      yield* call(url, "PUT", "/v1/default/banks/killed", { name: "killed" })
      yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("a", 150) })
      const repo = yield* call(url, "POST", "/v1/default/banks/killed/repos/enable", {})
      const committed = yield* memoryIds(url, "killed")

      // Time a reset that throws away 150 memories, then set up the same reset again.
      yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("b", 150) })
      const started = performance.now()
      yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/reset-hard`, {
        commit_id: repo.head_commit_id,
        force: true
      })
      const took = performance.now() - started
      assert.strictEqual(yield* memoryIds(url, "killed"), committed)
      yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("c", 150) })
      const dirty = yield* memoryIds(url, "killed")
      assert.notStrictEqual(dirty, committed)

      const reset = fetch(`${url}/v1/default/repos/${repo.repo_id}/reset-hard`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ commit_id: repo.head_commit_id, force: true })
      }).catch(() => undefined)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(5, took / 2))))
      yield* killHard(first)
      yield* Effect.promise(() => reset)

      yield* restart
      const after = yield* memoryIds(url, "killed")
      assert.isTrue(after === committed || after === dirty, "the bank holds a mix of the old and the new state")
      yield* Effect.logInfo(
        `reset took ${Math.round(took)} ms; killed at half: ${after === committed ? "reset landed" : "rolled back"}`
      )
      // Whichever state survived, the repo still works on it.
      const status = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/status`)
      assert.strictEqual(status.dirty, after === dirty)
    })), 240_000)
})
