/**
 * Garbage collection of the repo object store, over HTTP: after a hard reset to an older commit (orphaning the
 * commits after it), a parked stash that went back to being active, and a deleted branch, a collection removes
 * every object no branch reaches and the orphaned commits, `stored_bytes` drops, and every remaining branch and
 * commit still checks out to exactly the rows it held before (the full-scan hash of every versioned row).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GarbageCollection } from "../../src/repos/GarbageCollection.ts"
import { Snapshots } from "../../src/repos/Snapshots.ts"
import { settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bankId = "repo-gc"
const bank = `/v1/default/banks/${bankId}`

/** Objects reachable from no branch: not through a head's history, a stashed working tree or a read copy. */
const unreachable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number }>`
    WITH RECURSIVE held(id) AS (
      SELECT head_commit_id FROM repo_branches WHERE head_commit_id IS NOT NULL
      UNION SELECT c.parent_commit_id FROM repo_commits c JOIN held ON c.commit_id = held.id
    ),
    live(hash) AS (
      SELECT e.value FROM repo_commits c JOIN held ON held.id = c.commit_id CROSS JOIN LATERAL jsonb_each_text(c.tables) e
      UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.state_tables, '{}')) e
      UNION SELECT e.value FROM repo_branches b CROSS JOIN LATERAL jsonb_each_text(coalesce(b.replica_tables, '{}')) e
      UNION SELECT e.value FROM live JOIN repo_objects o ON o.hash = live.hash AND o.kind <> 'row'
        CROSS JOIN LATERAL jsonb_each_text(o.body) e
    )
    SELECT count(*)::int AS n FROM repo_objects o WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.hash = o.hash)`
  return rows[0]!.n
})

layer(testApp(), { excludeTestServices: true })("memory repos: garbage collection", (it) => {
  it.effect(
    "after a reset, a dropped stash and a branch delete, GC removes what no branch reaches and keeps the rest",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const snapshots = yield* Snapshots
        const garbage = yield* GarbageCollection
        const ok = (method: string, path: string, json?: unknown) =>
          Effect.map(server.request(method, path, json === undefined ? {} : { json }), (response) => {
            assert.strictEqual(response.status, 200, `${method} ${path}: ${response.text}`)
            return response.body as any
          })
        const retain = (...contents: ReadonlyArray<string>) =>
          Effect.andThen(
            ok("POST", `${bank}/memories`, { items: contents.map((content) => ({ content })) }),
            settled(bankId)
          )
        /** The root bank's every versioned row, as the full-scan hash, and its memories' texts. */
        const observe = Effect.gen(function*() {
          const capture = yield* snapshots.capture({ bankId, workspace: false }, false)
          const texts = (yield* sql<{ text: string }>`SELECT text FROM memory_units WHERE bank_id = ${bankId}`)
            .map((row) => row.text).sort()
          return { rootHash: capture.rootHash, texts }
        })

        yield* ok("PUT", bank, { name: bankId })
        yield* retain("Ines tends the apple orchard in Porto.", "The Riga lighthouse keeper plays the violin.")
        const repo = yield* ok("POST", `${bank}/repos/enable`, {})
        const repoId = repo.repo_id as string
        const first = repo.head_commit_id as string
        const states = new Map([[first, yield* observe]])

        yield* retain("Boris rows a kayak across the Seoul harbour every dawn.")
        const second = (yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "second" }))
          .commit_id as string
        states.set(second, yield* observe)
        yield* ok("POST", `/v1/default/repos/${repoId}/branches`, { branch_name: "side" })
        yield* ok("POST", `/v1/default/repos/${repoId}/branches`, { branch_name: "doomed" })

        yield* retain("Chloe bakes rye bread in a Quito bakery.", "Farid mapped the Tunis medina by telescope.")
        const third = (yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "third" }))
          .commit_id as string
        states.set(third, yield* observe)
        const thirdTables = (yield* sql<{ tables: Record<string, string> }>`
        SELECT tables FROM repo_commits WHERE commit_id = ${third}`)[0]!.tables

        // Uncommitted work parked by a checkout and brought back: its stash is referenced by nothing afterwards.
        yield* retain("Elena keeps a logbook of every eclipse seen from Oslo.")
        yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "side" })
        yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "main" })
        // Back to the first commit: the third (and the stash) are reachable from no branch now.
        yield* ok("POST", `/v1/default/repos/${repoId}/reset-hard`, { commit_id: first, force: true })
        yield* ok("DELETE", `/v1/default/repos/${repoId}/branches/doomed`)

        const before = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
        assert.isAbove(yield* unreachable, 0, "the reset and the dropped stash left objects no branch reaches")
        const graced = yield* garbage.collect()
        assert.strictEqual(graced.commitsRemoved, 0, "an orphaned commit younger than the grace (1 hour) is kept")
        const undo = yield* server.request(
          "GET",
          `/v1/default/repos/${repoId}/diff?from_commit_id=${third}&to_commit_id=${first}`
        )
        assert.strictEqual(undo.status, 200, undo.text)
        const result = yield* garbage.collect({ orphanGrace: 0 })
        assert.isAbove(graced.removed + result.removed, 0)
        assert.strictEqual(result.commitsRemoved, 1, "the third commit, orphaned by the reset")
        assert.strictEqual(yield* unreachable, 0, "everything no branch reaches is gone")
        const left = yield* sql<{ hash: string }>`SELECT hash FROM repo_objects WHERE hash IN ${
          sql.in(Object.values(thirdTables))
        }
        AND hash NOT IN (SELECT e.value FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e)`
        assert.deepStrictEqual(left, [])
        const after = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
        assert.isBelow(after.stored_bytes, before.stored_bytes, "stored_bytes drops with the orphaned commit")
        const gone = yield* server.request(
          "GET",
          `/v1/default/repos/${repoId}/diff?from_commit_id=${third}&to_commit_id=${first}`
        )
        assert.strictEqual(gone.status, 404, gone.text)

        // Every remaining commit and branch checks out to exactly its rows.
        assert.deepStrictEqual(yield* observe, states.get(first))
        yield* ok("POST", `/v1/default/repos/${repoId}/reset-hard`, { commit_id: second })
        assert.deepStrictEqual(yield* observe, states.get(second))
        yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "side" })
        assert.deepStrictEqual(yield* observe, states.get(second))
        const status = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
        assert.strictEqual(status.dirty, false)
        yield* ok("POST", `/v1/default/repos/${repoId}/reset-hard`, { commit_id: first })
        assert.deepStrictEqual(yield* observe, states.get(first))
        const log = yield* ok("GET", `/v1/default/repos/${repoId}/log?branch_name=main`)
        assert.strictEqual(log.total, 2)

        // A second collection finds nothing more, and work goes on after it.
        yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "main" })
        const again = yield* garbage.collect()
        assert.strictEqual(yield* unreachable, 0)
        assert.isAtLeast(again.cycles, 1)
        yield* retain("Dmitri repairs the Oslo tram line.")
        const fourth = yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "fourth" })
        assert.isTrue(fourth.created)
        assert.deepStrictEqual((yield* ok("GET", `/v1/default/repos/${repoId}/status`)).dirty, false)
      }),
    180_000
  )
})
