/**
 * A forget with `purge_history` survives a SIGKILL: the purge rewrites the bank's memory repo in the forget's own
 * transaction (read before it, in slices that change nothing), so a service killed in the middle of it leaves either the old history (every commit with its old id,
 * each still holding the entity, and the entity's memories live) or the new one (every commit with a new id, none
 * holding it, and the memories gone), never a mix; after a rollback the same purge then completes. What a commit
 * holds is read as a user would: a fork of it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { call, facts, repoServiceEnv } from "../support/RepoKillFixtures.ts"

const bankId = "purge-killed"
const bank = `/v1/default/banks/${bankId}`
const repos = "/v1/default/repos"
const name = "Zephyrine Okafor"
const about = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    content: `Zephyrine Okafor checked greenhouse ${tag}${i} and logged ${i * 3} seedlings there.`,
    entities: [{ text: name }]
  }))

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** How many memories of a bank name the entity. */
const naming = (url: string, path: string) =>
  Effect.map(
    call(url, "GET", `${path}/memories/list?limit=1000`),
    (page) => (page.items as Array<any>).filter((item) => item.text.includes("Zephyrine")).length
  )

/** How many of the entity's memories each commit holds, read through a fork of it. */
const holding = (url: string, repoId: string, commitIds: ReadonlyArray<string>, prefix: string) =>
  Effect.gen(function*() {
    const held: Array<number> = []
    for (const [index, commitId] of commitIds.entries()) {
      const target = `${prefix}-commit-${index}`
      yield* call(url, "POST", `${repos}/${repoId}/fork-bank`, { target_bank_id: target, source_commit_id: commitId })
      held.push(yield* naming(url, `/v1/default/banks/${target}`))
    }
    return held
  })

describe("purge_history under SIGKILL", () => {
  it.live(
    "a forget with purge_history killed midway leaves the old history with the memories or the new one without",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { url, first, restart } = yield* startService(repoServiceEnv())

        // Three commits, each holding more of the entity than the one before.
        yield* call(url, "POST", `${bank}/memories`, { items: [...about("a", 100), ...facts("a", 100)] })
        const repoId = (yield* call(url, "POST", `${bank}/repos/enable`, {})).repo_id as string
        yield* call(url, "POST", `${bank}/memories`, { items: [...about("b", 100), ...facts("b", 100)] })
        yield* call(url, "POST", `${repos}/${repoId}/commit`, { message: "second" })
        yield* call(url, "POST", `${bank}/memories`, { items: [...about("c", 50), ...facts("c", 50)] })
        yield* call(url, "POST", `${repos}/${repoId}/commit`, { message: "third" })
        const before = ((yield* call(url, "GET", `${repos}/${repoId}/log?limit=100`)).commits as Array<any>)
          .map((commit) => commit.commit_id as string)
        assert.strictEqual(before.length, 3)
        const live = yield* naming(url, bank)
        assert.isAtLeast(live, 200)

        // A dry run does the purge's work and rolls it back: it times the purge the kill lands in. Three quarters in:
        // the purge reads history before its transaction (in slices, changing nothing), so a kill at half could land there.
        const started = performance.now()
        const dry = yield* call(url, "POST", `${bank}/forget`, { entity: name, purge_history: true, dry_run: true })
        const took = performance.now() - started
        assert.strictEqual(dry.repo_commits.rewrites.length, 3, JSON.stringify(dry.repo_commits))
        const purging = fetch(`${url}${bank}/forget`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ entity: name, purge_history: true })
        }).catch(() => undefined)
        yield* sleep(Math.max(5, took * 0.75))
        yield* killHard(first)
        yield* Effect.promise(() => purging)

        yield* restart
        const after = ((yield* call(url, "GET", `${repos}/${repoId}/log?limit=100`)).commits as Array<any>)
          .map((commit) => commit.commit_id as string)
        assert.strictEqual(after.length, 3)
        const kept = after.filter((id) => before.includes(id)).length
        assert.isTrue(kept === 0 || kept === 3, `${kept} of 3 commits kept their ids: the history is half rewritten`)
        const rewritten = kept === 0
        const held = yield* holding(url, repoId, after, "killed")
        // The log is newest first: the last commit holds all the entity's memories (nothing changed after it), the
        // earlier ones fewer; after the purge none holds any.
        if (rewritten) assert.deepStrictEqual(held, [0, 0, 0])
        else {
          assert.strictEqual(held[0], live, `the last commit holds what the bank held: ${held}`)
          assert.isTrue(held[0]! > held[1]! && held[1]! > held[2]! && held[2]! > 0, `each commit holds more: ${held}`)
        }
        assert.strictEqual(yield* naming(url, bank), rewritten ? 0 : live, "the live bank follows its history")
        const entity = ((yield* call(url, "GET", `${bank}/entities?limit=1000`)).items as Array<any>)
          .some((item) => item.canonical_name === name)
        assert.strictEqual(entity, !rewritten, "the entity goes with its memories, and only with them")
        yield* Effect.logInfo(
          `purge took ${Math.round(took)} ms; killed three quarters in: ${rewritten ? "purge landed" : "rolled back"}`
        )
        if (!rewritten) {
          // Nothing the killed purge began is left in the way: the same request now rewrites the whole history.
          const purged = yield* call(url, "POST", `${bank}/forget`, { entity: name, purge_history: true })
          assert.strictEqual(purged.repo_commits.rewrites.length, 3)
          const ids = ((yield* call(url, "GET", `${repos}/${repoId}/log?limit=100`)).commits as Array<any>)
            .map((commit) => commit.commit_id as string)
          assert.deepStrictEqual(ids.filter((id) => before.includes(id)), [])
          assert.deepStrictEqual(yield* holding(url, repoId, ids, "purged"), [0, 0, 0])
          assert.strictEqual(yield* naming(url, bank), 0)
        }
      })),
    480_000
  )
})
