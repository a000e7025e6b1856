/**
 * The first enable of a bank runs in slices, each its own transaction: the service killed with SIGKILL half way
 * through leaves either no repo or a repo part-way, and the next enable call resumes and finishes it — the repo
 * then works: clean status, no empty commit, and the memories are the ones the bank held.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { call, facts, memoryIds, repoServiceEnv } from "../support/RepoKillFixtures.ts"

describe("memory repo enable", () => {
  it.live(
    "SIGKILL mid-enable leaves no repo or one that the next enable finishes",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, first, restart } = yield* startService(repoServiceEnv())

        // Time the enable of one bank, then kill the service half way through the enable of a bank like it.
        for (const bank of ["timed", "killed"]) {
          yield* call(url, "PUT", `/v1/default/banks/${bank}`, { name: bank })
          yield* call(url, "POST", `/v1/default/banks/${bank}/memories`, { items: facts("a", 200) })
        }
        const started = performance.now()
        yield* call(url, "POST", "/v1/default/banks/timed/repos/enable", {})
        const took = performance.now() - started
        const before = yield* memoryIds(url, "killed")
        const enabling = fetch(`${url}/v1/default/banks/killed/repos/enable`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}"
        }).catch(() => undefined)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(5, took / 2))))
        yield* killHard(first)
        yield* Effect.promise(() => enabling)

        yield* restart
        const found = yield* call(url, "GET", "/v1/default/banks/killed/repo")
        yield* Effect.logInfo(
          `enable took ${Math.round(took)} ms; killed at half: ${
            found.repo === null ? "no repo yet" : "repo part-way or done"
          }`
        )
        const repo = yield* call(url, "POST", "/v1/default/banks/killed/repos/enable", {})
        assert.isString(repo.head_commit_id)
        const status = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/status`)
        assert.strictEqual(status.dirty, false)
        assert.isUndefined(status.enabling)
        const again = yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/commit`, {
          message: "nothing changed"
        })
        assert.strictEqual(again.created, false)
        assert.strictEqual(yield* memoryIds(url, "killed"), before)
        const log = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/log`)
        assert.strictEqual(log.total, 1)
      })),
    240_000
  )
})
