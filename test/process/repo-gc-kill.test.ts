/**
 * Repo garbage collection runs in slices, each its own transaction, with its progress in the database: the service
 * killed with SIGKILL in the middle of a collection comes back, finishes it, and every branch still checks out to
 * the memories it held — nothing reachable was lost — while the commit orphaned by a hard reset is gone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Child, killHard, startService } from "../support/ChildService.ts"
import { call, facts, memoryIds, repoServiceEnv } from "../support/RepoKillFixtures.ts"

const count = (child: Child, text: string) => child.output().split(text).length - 1

/** Waits until the child's log holds `text` more than `seen` times. */
const waitForLog = (child: Child, text: string, seen: number) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 360_000
    while (count(child, text) <= seen) {
      if (Date.now() > deadline) throw new Error(`no new "${text}" in the log:\n${child.output().slice(-4000)}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })

describe("memory repo garbage collection", () => {
  it.live(
    "SIGKILL mid-collection loses nothing a branch reaches, and the next start finishes it",
    () =>
      Effect.scoped(Effect.gen(function*() {
        // Small slices, so a collection of this bank takes many of them (the mark alone takes dozens: about 1,250
        // marks each, ~9,000 objects), and no wait after a request. Sweep slices of 100 made each collection 9-14 s
        // longer, and the test waits for three of them.
        const { url, first, restart } = yield* startService({
          ...repoServiceEnv(),
          SERVICE_API_REPO_GC_DELAY: "10 millis",
          SERVICE_API_REPO_GC_SLICE: "1000",
          SERVICE_API_REPO_GC_ORPHAN_GRACE: "0 millis"
        })
        const repos = `${url}/v1/default/repos`

        yield* call(url, "PUT", "/v1/default/banks/killed", { name: "killed" })
        yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("a", 120) })
        const repo = yield* call(url, "POST", "/v1/default/banks/killed/repos/enable", {})
        const atFirst = yield* memoryIds(url, "killed")
        yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("b", 60) })
        const second = yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/commit`, { message: "b" })
        const atSecond = yield* memoryIds(url, "killed")
        yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/branches`, { branch_name: "side" })
        yield* call(url, "POST", "/v1/default/banks/killed/memories", { items: facts("c", 60) })
        const third = yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/commit`, { message: "c" })

        // The commits asked for collections too: let those end first (each start is followed by its finish).
        yield* Effect.promise(async () => {
          while (count(first, "repo garbage collection started") > count(first, "repo garbage collection finished")) {
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })
        // The reset orphans the third commit and asks for a collection; kill the service once it is under way.
        const started = count(first, "repo garbage collection started")
        const finished = count(first, "repo garbage collection finished")
        yield* Effect.promise(() =>
          fetch(`${repos}/${repo.repo_id}/reset-hard`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ commit_id: repo.head_commit_id, force: true })
          })
        )
        yield* waitForLog(first, "repo garbage collection started", started)
        yield* killHard(first)
        const midway = count(first, "repo garbage collection finished") === finished
        yield* Effect.logInfo(first.output().split("\n").filter((line) => line.includes("garbage")).join("\n"))
        yield* Effect.logInfo(`killed ${midway ? "mid-collection" : "after the collection finished"}`)
        assert.isTrue(midway, "the kill landed after the collection: make the slices smaller")

        const restarted = yield* restart
        yield* waitForLog(restarted, "repo garbage collection finished", 0)

        assert.strictEqual(yield* memoryIds(url, "killed"), atFirst)
        const status = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/status`)
        assert.strictEqual(status.dirty, false)
        const orphan = yield* Effect.promise(() =>
          fetch(`${repos}/${repo.repo_id}/diff?from_commit_id=${third.commit_id}&to_commit_id=${repo.head_commit_id}`)
        )
        assert.strictEqual(orphan.status, 404, "the commit the reset orphaned is collected")
        const log = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/log`)
        assert.strictEqual(log.total, 1)
        yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/checkout`, { branch_name: "side" })
        assert.strictEqual(yield* memoryIds(url, "killed"), atSecond)
        const sideStatus = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/status`)
        assert.strictEqual(sideStatus.dirty, false)
        // Back and forth between the branches, not by resets: a hard reset of "side" would orphan the second commit,
        // and with no grace the collection it asks for may delete that commit before the next call reads it.
        yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/checkout`, { branch_name: "main" })
        assert.strictEqual(yield* memoryIds(url, "killed"), atFirst)
        yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/checkout`, { branch_name: "side" })
        assert.strictEqual(yield* memoryIds(url, "killed"), atSecond)
        const sideLog = yield* call(url, "GET", `/v1/default/repos/${repo.repo_id}/log`)
        assert.deepStrictEqual(sideLog.commits.map((commit: any) => commit.commit_id), [
          second.commit_id,
          repo.head_commit_id
        ])
      })),
    900_000
  )
})
