/**
 * Memory repos, second step, over HTTP with the database read alongside: checkout and hard reset rewrite only the
 * rows that differ (an untouched row keeps its row version, `xmin`), the object store is a two-level bucket tree,
 * ids inside JSON columns are renamed like id columns in workspaces and forks, deleting a root bank deletes its
 * repo, branches and hidden workspaces and collects unreachable objects, and the MCP read tools take
 * `branch_name`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GarbageCollection } from "../../src/repos/GarbageCollection.ts"
import { connectMcp } from "../support/McpClient.ts"
import { recallResults, settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const settle = settled

/** Row versions of a bank's memories: a row rewritten (deleted and inserted, or updated) gets a new `xmin`. */
const versions = (bankId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<
      { id: string; v: string }
    >`SELECT id, xmin::text AS v FROM memory_units WHERE bank_id = ${bankId}`
    return new Map(rows.map((row) => [row.id, row.v]))
  })

/** Objects no commit reaches, found the way the collector marks them. */
const unreachable = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number }>`
    WITH RECURSIVE live(hash) AS (
      SELECT e.value FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e
      UNION
      SELECT e.value FROM live JOIN repo_objects o ON o.hash = live.hash AND o.kind <> 'row'
      CROSS JOIN LATERAL jsonb_each_text(o.body) e)
    SELECT count(*)::int AS n FROM repo_objects o WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.hash = o.hash)`
  return rows[0]!.n
})

layer(testApp(), { excludeTestServices: true })(
  "memory repos: in-place restores, tree, JSON ids, cleanup, MCP",
  (it) => {
    const retain = (id: string, items: ReadonlyArray<{ content: string; metadata?: Record<string, string> }>) =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const response = yield* server.request("POST", `${bank(id)}/memories`, { json: { items } })
        assert.strictEqual(response.status, 200, response.text)
        yield* settle(id)
      })
    const setup = (id: string, facts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const server = yield* TestServer
        yield* server.request("PUT", bank(id), { json: { name: id } })
        yield* retain(id, facts.map((content) => ({ content })))
        const enabled = yield* server.request("POST", `${bank(id)}/repos/enable`, { json: {} })
        assert.strictEqual(enabled.status, 200, enabled.text)
        return enabled.body
      })
    const recall = recallResults
    const facts = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => `Observatory ${tag}${i} logged comet sighting number ${i} over ridge ${tag}.`)

    it.effect("a hard reset rewrites only the rows that differ and restores the committed memories exactly", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const repo = yield* setup("inc-reset", facts("r", 30))
        const committed = yield* versions("inc-reset")
        const before = yield* recall("inc-reset", "comet sighting ridge")
        yield* retain("inc-reset", [{ content: "A new observatory opened on the northern ridge for meteor showers." }])
        const doomed = [...committed.keys()][0]!
        yield* (yield* SqlClient.SqlClient)`DELETE FROM memory_units WHERE id = ${doomed}` // a change no route makes
        assert.strictEqual((yield* versions("inc-reset")).size, committed.size) // one added, one deleted

        const reset = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/reset-hard`, {
          json: { commit_id: repo.head_commit_id, force: true }
        })
        assert.strictEqual(reset.status, 200, reset.text)
        assert.strictEqual(reset.body.dirty, false)
        const after = yield* versions("inc-reset")
        assert.sameMembers([...after.keys()], [...committed.keys()])
        const untouched = [...committed.keys()].filter((id) => id !== doomed)
        assert.isTrue(untouched.every((id) => after.get(id) === committed.get(id)), "an unchanged memory was rewritten")
        assert.notStrictEqual(after.get(doomed), committed.get(doomed)) // the deleted one came back as a new row
        assert.deepStrictEqual(yield* recall("inc-reset", "comet sighting ridge"), before)
      }))

    it.effect("checkout swaps only the differing rows; the target's hidden bank becomes the parked workspace", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const repo = yield* setup("inc-checkout", facts("c", 20))
        const branch = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/branches`, {
          json: { branch_name: "side" }
        })
        const hidden = branch.body.workspace_bank_id as string
        yield* retain("inc-checkout", [{ content: "The ridge observatory bought a new telescope with a copper dome." }])
        yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, { json: { message: "telescope" } })
        const onMain = yield* recall("inc-checkout", "copper dome telescope")
        const mainRows = yield* versions("inc-checkout")

        const checkout = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/checkout`, {
          json: { branch_name: "side" }
        })
        assert.strictEqual(checkout.status, 200, checkout.text)
        const sideRows = yield* versions("inc-checkout")
        assert.strictEqual(sideRows.size, mainRows.size - 1)
        assert.isTrue(
          [...sideRows].every(([id, v]) => mainRows.get(id) === v),
          "a memory both branches share was rewritten"
        )
        const parked = checkout.body.branches.find((b: any) => b.branch_name === "main")
        assert.strictEqual(parked.workspace_bank_id, hidden)
        assert.isFalse(parked.dirty)
        assert.isFalse(checkout.body.branches.find((b: any) => b.branch_name === "side").dirty)
        assert.isTrue(
          (yield* recall("inc-checkout", "copper dome telescope", "main")).some((r: any) => r.text.includes("copper"))
        )
        assert.isFalse(
          (yield* recall("inc-checkout", "copper dome telescope")).some((r: any) => r.text.includes("copper"))
        )
        const banks = yield* sql<
          { n: number }
        >`SELECT count(*)::int AS n FROM banks WHERE bank_id LIKE '\\_\\_repo\\_\\_%' AND bank_id IN (
        SELECT workspace_bank_id FROM repo_branches WHERE repo_id = ${repo.repo_id})`
        assert.strictEqual(banks[0]!.n, 1)

        const back = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/checkout`, {
          json: { branch_name: "main" }
        })
        assert.strictEqual(back.status, 200, back.text)
        assert.deepStrictEqual(yield* recall("inc-checkout", "copper dome telescope"), onMain)
        const again = yield* versions("inc-checkout")
        assert.sameMembers([...again.keys()], [...mainRows.keys()])
        assert.isTrue(
          [...sideRows].every(([id, v]) => again.get(id) === v),
          "a shared memory was rewritten on the way back"
        )
      }))

    it.effect("commits store a two-level bucket tree; a one-memory commit adds one node per changed top bucket", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const repo = yield* setup("inc-tree", facts("t", 25))
        yield* retain("inc-tree", [{ content: "Ridge observatory t-extra recorded a fireball." }])
        const second = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, {
          json: { message: "one" }
        })
        assert.strictEqual(second.body.created, true)
        const tables = (yield* sql<{ tables: Record<string, string> }>`
        SELECT tables FROM repo_commits WHERE commit_id = ${second.body.commit_id}`)[0]!.tables
        const kinds = (hashes: ReadonlyArray<string>) =>
          Effect.map(
            sql<{ kind: string; body: Record<string, string> }>`SELECT kind, body FROM repo_objects WHERE hash IN ${
              sql.in(hashes)
            }`,
            (rows) => rows
          )
        const manifest = (yield* kinds([tables["memory_units"]!]))[0]!
        assert.strictEqual(manifest.kind, "table")
        const nodes = yield* kinds(Object.values(manifest.body))
        assert.isTrue(nodes.length > 0 && nodes.every((node) => node.kind === "node"))
        const leaves = yield* kinds(nodes.flatMap((node) => Object.values(node.body)))
        assert.isTrue(leaves.every((leaf) => leaf.kind === "bucket"))
        const rows = leaves.reduce((sum, leaf) => sum + Object.keys(leaf.body).length, 0)
        assert.strictEqual(rows, second.body.stats.rows.memory_units)
        assert.isAbove(second.body.stats.bytes_added, 0)

        const diff = yield* server.request(
          "GET",
          `/v1/default/repos/${repo.repo_id}/diff?from_commit_id=${repo.head_commit_id}&to_commit_id=${second.body.commit_id}&rows=true&table=memory_units`
        )
        assert.strictEqual(diff.body.table_deltas.memory_units.added, 1)
        assert.strictEqual(diff.body.rows.total, 1)
      }))

    it.effect("ids inside JSON columns are renamed in a branch workspace and a fork, and read back unchanged", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        yield* server.request("PUT", bank("inc-json"), { json: {} })
        yield* retain("inc-json", [{ content: "The ridge observatory has a library of star charts." }])
        const cited = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = 'inc-json'`)[0]!.id
        yield* retain("inc-json", [{
          content: "Visitors borrowed the star charts for a night tour.",
          metadata: { cites: cited }
        }])
        const enabled = yield* server.request("POST", `${bank("inc-json")}/repos/enable`, { json: {} })
        const repoId = enabled.body.repo_id
        const citing = (bankId: string) =>
          Effect.map(
            sql<{ cites: string | null; cited: string | null }>`
            SELECT c.metadata ->> 'cites' AS cites,
              (SELECT u.id FROM memory_units u WHERE u.bank_id = ${bankId} AND u.text LIKE '%library of star charts%' LIMIT 1) AS cited
            FROM memory_units c WHERE c.bank_id = ${bankId} AND c.metadata ? 'cites'`,
            (rows) => rows
          )
        assert.deepStrictEqual((yield* citing("inc-json")).map((r) => r.cites), [cited])

        const branch = yield* server.request("POST", `/v1/default/repos/${repoId}/branches`, {
          json: { branch_name: "copy" }
        })
        // A branch is a pointer: its read copy (the hidden bank) is made by its first `branch_name` read.
        const read = yield* server.request("GET", `${bank("inc-json")}/memories/list?branch_name=copy`)
        assert.strictEqual(read.status, 200, read.text)
        const inWorkspace = yield* citing(branch.body.workspace_bank_id)
        assert.strictEqual(inWorkspace.length, 1)
        assert.notStrictEqual(inWorkspace[0]!.cites, cited)
        assert.strictEqual(inWorkspace[0]!.cites, inWorkspace[0]!.cited) // points at the workspace's own copy
        const status = yield* server.request("GET", `/v1/default/repos/${repoId}/status?branch_name=copy`)
        assert.notInclude(status.body.changed_components, "memory_units") // read back in root-bank ids

        const fork = yield* server.request("POST", `/v1/default/repos/${repoId}/fork-bank`, {
          json: { target_bank_id: "inc-json-fork" }
        })
        assert.strictEqual(fork.status, 200, fork.text)
        const inFork = yield* citing("inc-json-fork")
        assert.strictEqual(inFork.length, 1)
        assert.notStrictEqual(inFork[0]!.cites, cited)
        assert.strictEqual(inFork[0]!.cites, inFork[0]!.cited)
      }))

    it.effect("deleting a root bank deletes its repo, branches and hidden workspaces and collects its objects", () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const sql = yield* SqlClient.SqlClient
        const repo = yield* setup("inc-doomed", facts("d", 10))
        const branch = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/branches`, {
          json: { branch_name: "b" }
        })
        const hidden = branch.body.workspace_bank_id as string
        yield* retain("inc-doomed", [{ content: "Observatory d-extra closed for the winter." }])
        yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, { json: { message: "winter" } })
        const manifests = (yield* sql<{ tables: Record<string, string> }>`
        SELECT tables FROM repo_commits WHERE repo_id = ${repo.repo_id}`).flatMap((row) => Object.values(row.tables))
        const deleted = yield* server.request("DELETE", bank("inc-doomed"))
        assert.strictEqual(deleted.status, 200, deleted.text)
        // Deletion may run as background work: wait until the bank is gone.
        for (let i = 0; i < 100 && (yield* sql`SELECT 1 FROM banks WHERE bank_id = 'inc-doomed'`).length > 0; i++) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        }
        assert.strictEqual((yield* server.request("GET", `/v1/default/repos/${repo.repo_id}`)).status, 404)
        assert.strictEqual((yield* sql`SELECT 1 FROM banks WHERE bank_id = ${hidden}`).length, 0)
        assert.strictEqual((yield* sql`SELECT 1 FROM memory_units WHERE bank_id = ${hidden}`).length, 0)
        assert.strictEqual((yield* sql`SELECT 1 FROM repo_branches WHERE repo_id = ${repo.repo_id}`).length, 0)
        assert.strictEqual((yield* sql`SELECT 1 FROM repo_id_maps WHERE workspace_bank_id = ${hidden}`).length, 0)
        // The delete asks for a collection (it no longer marks the whole store in its own transaction); run it now.
        const asked = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM repo_gc_requests`
        assert.isAbove(asked[0]!.n, 0)
        yield* (yield* GarbageCollection).collect()
        assert.strictEqual(yield* unreachable, 0)
        const kept = yield* sql<{ hash: string }>`SELECT hash FROM repo_objects WHERE hash IN ${sql.in(manifests)}
        AND hash NOT IN (SELECT e.value FROM repo_commits c CROSS JOIN LATERAL jsonb_each_text(c.tables) e)`
        assert.deepStrictEqual(kept, [])
      }))

    it.effect("MCP recall, reflect, list_memories and get_memory read a branch by branch_name", () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestServer
        const repo = yield* setup("inc-mcp", ["The ridge observatory keeps a logbook of eclipses."])
        yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/branches`, { json: { branch_name: "quiet" } })
        yield* retain("inc-mcp", [{ content: "The observatory cat is named Nebula and sleeps on the telescope." }])
        const mcp = yield* connectMcp(`${server.url}/mcp/`)
        const texts = (result: any) => result.results.map((r: any) => r.text as string)
        const main = yield* mcp.ok("recall", { bank_id: "inc-mcp", query: "observatory cat Nebula" })
        const quiet = yield* mcp.ok("recall", {
          bank_id: "inc-mcp",
          query: "observatory cat Nebula",
          branch_name: "quiet"
        })
        assert.isTrue(texts(main).some((t: string) => t.includes("Nebula")))
        assert.isFalse(texts(quiet).some((t: string) => t.includes("Nebula")))
        assert.include(
          yield* mcp.fails("recall", { bank_id: "inc-mcp", query: "cat", branch_name: "nope" }),
          "branch 'nope' not found"
        )
        const listedMain = yield* mcp.ok("list_memories", { bank_id: "inc-mcp" })
        const listedQuiet = yield* mcp.ok("list_memories", { bank_id: "inc-mcp", branch_name: "quiet" })
        assert.isAbove(listedMain.total, listedQuiet.total)
        const one = listedQuiet.items[0]
        const got = yield* mcp.ok("get_memory", { bank_id: "inc-mcp", memory_id: one.id, branch_name: "quiet" })
        assert.strictEqual(got.text, one.text)
        assert.include(yield* mcp.fails("get_memory", { bank_id: "inc-mcp", memory_id: one.id }), "not found")
        assert.include(
          yield* mcp.fails("reflect", { bank_id: "inc-mcp", query: "What is the cat called?", branch_name: "nope" }),
          "branch 'nope' not found"
        )
      })))
  }
)
