/**
 * Memory repo branches as pointers, over HTTP: creating a branch copies nothing (no hidden bank until its first
 * `branch_name` read), a parked branch keeps its uncommitted work, a branch that is not active can be deleted
 * (with its read copy), `log` pages with a total, and status reports the repo's stored size.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bankId = "repo-pointers"
const bank = `/v1/default/banks/${bankId}`

layer(testApp(), { excludeTestServices: true })("memory repos: branches are pointers", (it) => {
  it.effect("branch, stash, read copy, delete, log total", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const ok = (method: string, path: string, json?: unknown) =>
        Effect.map(server.request(method, path, json === undefined ? {} : { json }), (response) => {
          assert.strictEqual(response.status, 200, `${method} ${path}: ${response.text}`)
          return response.body as any
        })
      const retain = (content: string) =>
        Effect.andThen(ok("POST", `${bank}/memories`, { items: [{ content }] }), settled(bankId))
      const texts = (branch: string) =>
        Effect.map(
          ok("GET", `${bank}/memories/list?branch_name=${branch}&limit=100`),
          (page) => (page.items as Array<{ text: string }>).map((item) => item.text).sort()
        )
      const bankCount = (id: string) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM banks WHERE bank_id = ${id}`, (rows) => rows[0]!.n)

      yield* ok("PUT", bank, { name: bankId })
      yield* retain("Greta restores antique clocks in Bern.")
      const repo = yield* ok("POST", `${bank}/repos/enable`, {})
      const repoId = repo.repo_id as string
      assert.isUndefined((yield* ok("GET", `/v1/default/repos/${repoId}/status`)).enabling)

      // Uncommitted work goes with a branch made from the workspace, and stays with it while it is parked.
      yield* retain("Greta's workshop repaired a cuckoo clock from 1870.")
      const side = yield* ok("POST", `/v1/default/repos/${repoId}/branches`, { branch_name: "side" })
      assert.strictEqual(side.dirty, true)
      assert.strictEqual(yield* bankCount(side.workspace_bank_id), 0, "a new branch copies nothing")
      yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "cuckoo" })
      yield* retain("Greta sold a pendulum clock to a museum.") // uncommitted on main
      const mainBefore = yield* texts("main")
      assert.strictEqual(mainBefore.length, 3)

      yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "side" })
      const onSide = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
      assert.strictEqual(onSide.dirty, true, "side's stashed work is uncommitted again")
      assert.include(onSide.changed_components, "memory_units")
      const parked = yield* ok("GET", `/v1/default/repos/${repoId}/status?branch_name=main`)
      assert.strictEqual(parked.dirty, true, "main's uncommitted memory is stashed, not lost")
      assert.deepStrictEqual(yield* texts("main"), mainBefore)
      const mainCopy = (yield* ok("GET", `/v1/default/repos/${repoId}/branches`)).branches
        .find((b: any) => b.branch_name === "main").workspace_bank_id as string
      assert.strictEqual(yield* bankCount(mainCopy), 1, "the first branch_name read made main's read copy")

      yield* ok("POST", `/v1/default/repos/${repoId}/checkout`, { branch_name: "main" })
      assert.deepStrictEqual(yield* texts("main"), mainBefore)
      const active = yield* server.request("DELETE", `/v1/default/repos/${repoId}/branches/main`)
      assert.strictEqual(active.status, 400, active.text)
      assert.include(active.body.detail, "branch_name")
      const unknown = yield* server.request("DELETE", `/v1/default/repos/${repoId}/branches/nope`)
      assert.strictEqual(unknown.status, 404, unknown.text)
      yield* texts("side") // gives side a read copy, which the delete must remove
      const sideCopy = (yield* ok("GET", `/v1/default/repos/${repoId}/branches`)).branches
        .find((b: any) => b.branch_name === "side").workspace_bank_id as string
      assert.strictEqual(yield* bankCount(sideCopy), 1)
      const left = yield* ok("DELETE", `/v1/default/repos/${repoId}/branches/side`)
      assert.deepStrictEqual(left.branches.map((b: any) => b.branch_name), ["main"])
      assert.strictEqual(yield* bankCount(sideCopy), 0)
      const gone = yield* server.request("GET", `${bank}/memories/list?branch_name=side`)
      assert.strictEqual(gone.status, 404)

      yield* ok("POST", `/v1/default/repos/${repoId}/commit`, { message: "pendulum" })
      const page = yield* ok("GET", `/v1/default/repos/${repoId}/log?limit=1`)
      assert.strictEqual(page.total, 3) // initial, cuckoo, pendulum
      assert.strictEqual(page.commits.length, 1)

      // The repo's stored size: what its commits added to the object store, and a commit adds to it.
      const all = yield* ok("GET", `/v1/default/repos/${repoId}/log`)
      const added = all.commits.reduce((sum: number, c: any) => sum + c.stats.bytes_added, 0)
      const sized = yield* ok("GET", `/v1/default/repos/${repoId}/status`)
      assert.isAbove(added, 0)
      assert.strictEqual(sized.stored_bytes, added)
    }), 300_000)
})
