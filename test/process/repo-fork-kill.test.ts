/**
 * A fork copies in slices, each its own transaction: the service killed with SIGKILL half way through a fork (with
 * `enable_repo`) comes back with the target bank part-way, and resumes it at start-up by itself, with no second
 * call, into a copy equal to the source with its repo's initial commit; a repeated call then answers 409.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { killHard, startService } from "../support/ChildService.ts"
import { eventually } from "../support/Eventually.ts"
import { call, facts, repoServiceEnv } from "../support/RepoKillFixtures.ts"

/** A bank's memory texts, sorted and joined (fork ids are new, texts are not). */
const texts = (url: string, bank: string) =>
  Effect.map(
    call(url, "GET", `/v1/default/banks/${bank}/memories/list?limit=1000`),
    (page) => page.items.map((item: any) => item.text).sort().join("\n")
  )

describe("memory repo fork", () => {
  it.live(
    "SIGKILL mid-fork: the restarted server finishes it without a second call",
    () =>
      Effect.scoped(Effect.gen(function*() {
        // Small slices, so the fork of this bank is many transactions.
        const { url, first, restart } = yield* startService({
          ...repoServiceEnv(),
          SERVICE_API_REPO_FORK_SLICE_ROWS: "100"
        })

        yield* call(url, "PUT", "/v1/default/banks/source", { name: "source" })
        yield* call(url, "POST", "/v1/default/banks/source/memories", { items: facts("a", 200) })
        const repo = yield* call(url, "POST", "/v1/default/banks/source/repos/enable", {})
        const expected = yield* texts(url, "source")

        const killedFork = {
          target_bank_id: "killed",
          target_bank_name: "Killed",
          enable_repo: true,
          repo_name: "killed-repo"
        }
        // Time one fork, then kill the service half way through a second one.
        const started = performance.now()
        yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, { target_bank_id: "timed" })
        const took = performance.now() - started
        assert.strictEqual(yield* texts(url, "timed"), expected)
        const forking = fetch(`${url}/v1/default/repos/${repo.repo_id}/fork-bank`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(killedFork)
        }).catch(() => undefined)
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, Math.max(5, took / 2))))
        yield* killHard(first)
        yield* Effect.promise(() => forking)

        yield* restart
        const repoOf = Effect.promise(() =>
          fetch(`${url}/v1/default/banks/killed/repo`).then(async (response) => ({
            status: response.status,
            repo: response.status === 200 ? ((await response.json()) as any).repo : null
          }))
        )
        const after = yield* repoOf
        yield* Effect.logInfo(
          `fork took ${Math.round(took)} ms; killed at half: ${after.status === 404 ? "no bank yet" : "bank made"}`
        )
        if (after.status === 404) {
          // Killed before the fork's first transaction: nothing was acknowledged or begun, so the client calls again.
          yield* call(url, "POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, killedFork)
        }
        // No second call: the server resumes the fork (and the new repo's sliced enable) by itself at start-up.
        const finished = yield* eventually(
          repoOf,
          (state) => state.repo !== null && state.repo.head_commit_id !== null,
          Duration.minutes(5),
          { what: "the interrupted fork and its repo's initial commit, resumed at start-up", interval: "200 millis" }
        )
        assert.strictEqual(finished.repo.name, "killed-repo")
        assert.strictEqual(yield* texts(url, "killed"), expected)
        const banks = yield* call(url, "GET", "/v1/default/banks")
        const killed = banks.banks.find((bank: any) => bank.bank_id === "killed")
        assert.strictEqual(killed?.name, "Killed")
        // A repeated call finds the finished fork's bank: 409, as for any existing bank.
        const again = yield* Effect.promise(() =>
          fetch(`${url}/v1/default/repos/${repo.repo_id}/fork-bank`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ target_bank_id: "killed" })
          })
        )
        assert.strictEqual(again.status, 409, "a finished fork's bank exists")
        // The copy works as a bank: it recalls its memories.
        const recall = yield* call(url, "POST", "/v1/default/banks/killed/memories/recall", {
          query: "sensor in hall a"
        })
        assert.isAbove(recall.results.length, 0)
      })),
    600_000
  )
})
