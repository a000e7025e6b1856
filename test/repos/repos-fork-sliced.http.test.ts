/**
 * A fork copies its source in bounded slices (`SlicedFork`): a fork of a few thousand versioned rows, cut into
 * many small slices, ends with the same rows as its source — per table, the same count; the same memories, links
 * and entities — and the job row is gone; a fork of a live workspace takes its uncommitted work too, and a clone
 * (`POST /v1/default/repos` with a source that has a repo) is such a fork.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Snapshots } from "../../src/repos/Snapshots.ts"
import { forkTuning } from "../../src/repos/SlicedFork.ts"
import { settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bankId = "repo-fork-src"
const bank = `/v1/default/banks/${bankId}`

const people = ["Ada", "Boris", "Chloe", "Dmitri", "Elena", "Farid", "Greta", "Hugo"]
const places = ["Oslo", "Porto", "Quito", "Riga", "Seoul", "Tunis", "Lima", "Accra"]

layer(testApp(), { excludeTestServices: true })("memory repos: forks in slices", (it) => {
  it.effect("a fork of a few thousand rows in many slices equals its source", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const snapshots = yield* Snapshots
      const ok = (method: string, path: string, json?: unknown) =>
        Effect.map(server.request(method, path, json === undefined ? {} : { json }), (response) => {
          assert.strictEqual(response.status, 200, `${method} ${path}: ${response.text}`)
          return response.body as any
        })
      /** A bank's content as a user sees it: rows per versioned table, memory texts, entity names, link count. */
      const contentOf = (id: string) =>
        Effect.gen(function*() {
          const capture = yield* snapshots.capture({ bankId: id, workspace: false }, false)
          const rows = Object.fromEntries(
            Object.entries(capture.tables).filter(([table]) => table !== "banks").map((
              [table, state]
            ) => [table, state.rows])
          )
          const texts = (yield* sql<{ text: string }>`SELECT text FROM memory_units WHERE bank_id = ${id}`).map((r) =>
            r.text
          ).sort()
          const entities =
            (yield* sql<{ name: string }>`SELECT canonical_name AS name FROM entities WHERE bank_id = ${id}`)
              .map((r) => r.name).sort()
          return { rows, texts, entities }
        })

      yield* ok("PUT", bank, { name: bankId })
      for (let batch = 0; batch < 4; batch++) {
        const items = Array.from({ length: 25 }, (_, i) => ({
          content: `${people[(batch + i) % 8]} met ${people[(i * 3) % 8]} in ${places[(batch * 5 + i) % 8]} on day ${
            batch * 25 + i
          }.`
        }))
        yield* ok("POST", `${bank}/memories`, { items })
        yield* settled(bankId)
      }
      const repo = yield* ok("POST", `${bank}/repos/enable`, {})
      const committed = yield* contentOf(bankId)
      const total = Object.values(committed.rows).reduce((sum, n) => sum + n, 0)
      assert.isAbove(total, 2000, "a few thousand versioned rows")

      const saved = forkTuning.sliceRows
      forkTuning.sliceRows = 50 // many slices
      const forked = yield* ok("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        target_bank_id: "repo-fork-copy",
        target_bank_name: "Copy"
      }).pipe(Effect.ensuring(Effect.sync(() => (forkTuning.sliceRows = saved))))
      assert.strictEqual(forked.bank_name, "Copy")
      assert.strictEqual(forked.source_ref, "branch:main")
      assert.strictEqual(forked.source_commit_id, repo.head_commit_id)
      assert.deepStrictEqual(yield* contentOf("repo-fork-copy"), committed)
      assert.strictEqual((yield* sql`SELECT 1 FROM repo_forks`).length, 0, "the job ends with the fork")
      assert.strictEqual((yield* sql`SELECT 1 FROM repo_id_maps WHERE workspace_bank_id = 'repo-fork-copy'`).length, 0)
      // Forked ids are new: the copy's memories are not the source's.
      const shared = yield* sql`SELECT 1 FROM memory_units a JOIN memory_units b ON a.id = b.id
        WHERE a.bank_id = ${bankId} AND b.bank_id = 'repo-fork-copy'`
      assert.strictEqual(shared.length, 0)

      // A live workspace with uncommitted work, forked with a repo of its own.
      yield* ok("POST", `${bank}/memories`, { items: [{ content: "Greta opened a bakery in Accra on day 500." }] })
      yield* settled(bankId)
      const live = yield* contentOf(bankId)
      forkTuning.sliceRows = 300
      const withWork = yield* ok("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        target_bank_id: "repo-fork-live",
        include_workspace: true,
        enable_repo: true
      }).pipe(Effect.ensuring(Effect.sync(() => (forkTuning.sliceRows = saved))))
      assert.strictEqual(withWork.source_ref, "workspace:main")
      assert.isTrue(withWork.repo_enabled)
      assert.deepStrictEqual(yield* contentOf("repo-fork-live"), live)
      const status = yield* ok("GET", `/v1/default/repos/${withWork.repo.repo_id}/status`)
      assert.strictEqual(status.dirty, false)
      const again = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        json: { target_bank_id: "repo-fork-live" }
      })
      assert.strictEqual(again.status, 409, again.text)

      // A clone of a bank with a repo goes through the same sliced fork, of its live workspace, and answers the
      // new repo with its initial commit made (in slices too).
      yield* ok("POST", `${bank}/memories`, { items: [{ content: "Hugo sold his boat in Lima on day 501." }] })
      yield* settled(bankId)
      const cloned = yield* contentOf(bankId)
      forkTuning.sliceRows = 300
      const clone = yield* ok("POST", "/v1/default/repos", {
        bank_id: "repo-fork-clone",
        source_bank_id: bankId,
        repo_name: "clone"
      }).pipe(Effect.ensuring(Effect.sync(() => (forkTuning.sliceRows = saved))))
      assert.strictEqual(clone.name, "clone")
      assert.strictEqual(clone.root_bank_id, "repo-fork-clone")
      assert.isString(clone.head_commit_id)
      assert.deepStrictEqual(yield* contentOf("repo-fork-clone"), cloned)
      assert.strictEqual((yield* ok("GET", `/v1/default/repos/${clone.repo_id}/status`)).dirty, false)
      assert.strictEqual((yield* sql`SELECT 1 FROM repo_forks`).length, 0, "the clone's fork job ended")
    }), 300_000)
})
