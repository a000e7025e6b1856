/**
 * `POST {bank}/forget` with `purge_history` over the real HTTP server, both tiers: after forgetting an entity no repo
 * route returns its content — log, diff between any two commits, checkout of every branch then recall, `branch_name`
 * reads of a parked branch, a parked branch's stashed work, forks of every commit — and no stored repo object holds
 * it; every commit of the other memories keeps exactly its other memories. A dry run lists the same rewrites and
 * changes nothing; the rewrite is audited without the name. A fork begun before the purge (its job row left part-way, as
 * a restart leaves it) still finishes from the objects it started from: the purge keeps what a fork under way copies.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { startForkProgress } from "../../../src/repos/SlicedFork.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { testApp } from "../../support/TestServer.ts"

const bankId = "purgeful"
const base = bankPath(bankId)
const name = "Ysolde"
const about = (what: string) => ({ content: `Ysolde Brannigan ${what}`, entities: [{ text: "Ysolde Brannigan" }] })

layer(testApp(), { excludeTestServices: true, timeout: "4 minutes" })("forget with purge_history", (it) => {
  it.effect(
    "rewrites every commit, branch and stash without the entity and keeps the other memories' history",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repos = "/v1/default/repos"
        const retain = (items: ReadonlyArray<unknown>) =>
          Effect.andThen(ok("POST", `${base}/memories`, { items }), settled(bankId))
        const commit = (message: string) => ok("POST", `${repos}/${repoId}/commit`, { message })
        const log = (branch: string) =>
          Effect.map(
            ok("GET", `${repos}/${repoId}/log?branch_name=${branch}&limit=200`),
            (r) => r.body.commits as Array<any>
          )
        const texts = (path: string) =>
          Effect.map(
            ok("GET", `${path}`),
            (r) => (r.body.items as Array<{ text: string }>).map((item) => item.text).sort()
          )
        /** The memories of a commit, as a fork of it lists them. */
        const forkTexts = (commitId: string, target: string) =>
          Effect.gen(function*() {
            yield* ok("POST", `${repos}/${repoId}/fork-bank`, { target_bank_id: target, source_commit_id: commitId })
            return yield* texts(`${bankPath(target)}/memories/list?limit=1000`)
          })
        const objectsNaming = (text: string) =>
          Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM repo_objects WHERE body::text ILIKE ${`%${text}%`}`,
            (rows) => rows[0]!.n
          )

        yield* retain([about("keeps the spare office key under the blue flowerpot."), {
          content: "Marguerite waters the office plants every Monday."
        }])
        const enabled = (yield* ok("POST", `${base}/repos/enable`, {})).body
        const repoId = enabled.repo_id as string
        yield* retain([about("moved to Lisbon in March to lead the design team."), {
          content: "Marguerite runs the planning meeting on Tuesdays."
        }])
        yield* commit("second")
        yield* ok("POST", `${repos}/${repoId}/branches`, { branch_name: "side" })
        yield* retain([{ content: "Marguerite ordered new chairs for the office." }])
        yield* commit("third")
        // Uncommitted work naming the entity, stashed into a branch made from the workspace, then committed on main.
        yield* retain([about("booked the Lisbon offsite venue.")])
        yield* ok("POST", `${repos}/${repoId}/branches`, { branch_name: "stash" })
        yield* commit("fourth")
        yield* retain([{ content: "Marguerite fixed the coffee machine." }]) // uncommitted, no entity
        // The parked branch has a read copy holding the entity.
        assert.include(
          (yield* ok("POST", `${base}/memories/recall`, {
            query: "Where is the spare office key?",
            branch_name: "side"
          })).text,
          name
        )

        assert.include(
          (yield* ok("GET", `${base}/memories/list?limit=1000&branch_name=stash`)).text,
          "Lisbon offsite",
          "the stash holds the entity"
        )
        const before = yield* log("main")
        assert.strictEqual(before.length, 4)
        const kept = new Map<string, Array<string>>()
        for (const [i, c] of before.entries()) {
          const listed = yield* forkTexts(c.commit_id, `purge-before-${i}`)
          assert.isTrue(listed.some((text) => text.includes(name)), `commit ${c.message} holds the entity`)
          kept.set(c.message, listed.filter((text) => !text.includes(name)))
        }
        assert.isAbove(yield* objectsNaming(name), 0, "the repo's objects hold the entity before the purge")
        const sideBefore = (yield* log("side")).map((c) => c.message)

        const dry =
          (yield* ok("POST", `${base}/forget`, { entity: "ysolde brannigan", purge_history: true, dry_run: true })).body
        assert.isFalse(dry.repo_commits.rewritten)
        assert.strictEqual(dry.repo_commits.rewrites.length, 4, JSON.stringify(dry.repo_commits))
        assert.deepStrictEqual(
          (yield* log("main")).map((c) => c.commit_id),
          before.map((c) => c.commit_id),
          "a dry run rewrites nothing"
        )

        const report = (yield* ok("POST", `${base}/forget`, { entity: "ysolde brannigan", purge_history: true })).body
        assert.isTrue(report.repo_commits.rewritten)
        assert.deepStrictEqual(
          report.repo_commits.rewrites,
          dry.repo_commits.rewrites,
          "the dry run listed the same rewrites"
        )
        assert.deepStrictEqual(
          [...report.repo_commits.rewrites.map((r: any) => r.old_commit_id)].sort(),
          before.map((c) => c.commit_id).sort()
        )
        assert.isAbove(report.repo_commits.objects_deleted, 0)
        assert.notInclude(JSON.stringify(report), name)
        yield* settled(bankId)

        // Log: new ids, same messages; the old ids are gone.
        const after = yield* log("main")
        assert.deepStrictEqual(after.map((c) => c.message), before.map((c) => c.message))
        const renamed = new Map(report.repo_commits.rewrites.map((r: any) => [r.old_commit_id, r.new_commit_id]))
        assert.deepStrictEqual(after.map((c) => c.commit_id), before.map((c) => renamed.get(c.commit_id)))
        assert.deepStrictEqual((yield* log("side")).map((c) => c.message), sideBefore)
        const stale = yield* call(
          "GET",
          `${repos}/${repoId}/diff?from_commit_id=${before[0].commit_id}&to_commit_id=${after[0].commit_id}`
        )
        assert.strictEqual(stale.status, 404, "an old commit id is gone")

        // Diff between any two commits (rows listed), and against the workspace.
        for (const from of after) {
          for (const to of after) {
            const diff = yield* ok(
              "GET",
              `${repos}/${repoId}/diff?from_commit_id=${from.commit_id}&to_commit_id=${to.commit_id}&rows=true&limit=1000`
            )
            assert.notInclude(diff.text, name)
            for (const id of report.memory_ids) assert.notInclude(diff.text, id)
          }
          const workspace = yield* ok(
            "GET",
            `${repos}/${repoId}/diff?from_commit_id=${from.commit_id}&include_workspace=true&rows=true&limit=1000`
          )
          assert.notInclude(workspace.text, name)
        }
        for (const branch of ["main", "side", "stash"]) {
          assert.notInclude((yield* ok("GET", `${repos}/${repoId}/log?branch_name=${branch}&limit=200`)).text, name)
        }
        // Every commit keeps exactly its other memories (a fork of it lists them).
        for (const [i, c] of after.entries()) {
          assert.deepStrictEqual(yield* forkTexts(c.commit_id, `purge-after-${i}`), kept.get(c.message), c.message)
        }
        // Parked branches: read copies and stashed work.
        for (const branch of ["side", "stash"]) {
          const recalled = yield* ok("POST", `${base}/memories/recall`, {
            query: "Ysolde Brannigan Lisbon office key",
            branch_name: branch
          })
          assert.notInclude(recalled.text, name)
          assert.notInclude((yield* ok("GET", `${base}/memories/list?limit=1000&branch_name=${branch}`)).text, name)
          assert.notInclude((yield* ok("GET", `${repos}/${repoId}/status?branch_name=${branch}`)).text, name)
        }
        assert.include(
          (yield* ok("GET", `${base}/memories/list?limit=1000&branch_name=side`)).text,
          "Marguerite runs the planning meeting"
        )
        // Checkout of every branch, then recall, the memory list and the entity list.
        for (const branch of ["side", "stash", "main"]) {
          yield* ok("POST", `${repos}/${repoId}/checkout`, { branch_name: branch })
          yield* settled(bankId)
          for (const path of [`${base}/memories/list?limit=1000`, `${base}/entities?limit=1000`]) {
            assert.notInclude((yield* ok("GET", path)).text, name, `${branch}: ${path}`)
          }
          const recalled = yield* ok("POST", `${base}/memories/recall`, {
            query: "Ysolde Brannigan Lisbon office key",
            include: { entities: {}, chunks: {} }
          })
          assert.notInclude(recalled.text, name, branch)
          assert.include(
            (yield* ok("GET", `${base}/memories/list?limit=1000`)).text,
            "Marguerite waters the office plants",
            branch
          )
        }
        assert.include(
          (yield* ok("GET", `${base}/memories/list?limit=1000`)).text,
          "coffee machine",
          "main's uncommitted work is kept"
        )
        // The next commit takes main's uncommitted work onto the rewritten history, and nothing forgotten comes back.
        const fifth = (yield* commit("fifth")).body
        assert.isTrue(fifth.created)
        const fifthTexts = yield* forkTexts(fifth.commit_id, "purge-after-fifth")
        assert.include(fifthTexts.join("\n"), "coffee machine")
        assert.notInclude(fifthTexts.join("\n"), name)
        assert.isFalse((yield* ok("GET", `${repos}/${repoId}/status`)).body.dirty, "clean after the commit")
        // A fork of the branch head, and the object store itself.
        const forked = yield* ok("POST", `${repos}/${repoId}/fork-bank`, {
          target_bank_id: "purge-fork-head",
          source_branch: "side"
        })
        assert.notInclude(forked.text, name)
        assert.notInclude((yield* ok("GET", `${bankPath("purge-fork-head")}/memories/list?limit=1000`)).text, name)
        assert.strictEqual(yield* objectsNaming(name), 0, "no stored repo object holds the entity")
        for (const id of report.memory_ids) assert.strictEqual(yield* objectsNaming(id), 0)

        // Audited, without the name.
        const audit = yield* ok("GET", `${base}/audit-logs?action=memories.purge_history`)
        assert.strictEqual(audit.body.items.length, 1)
        assert.include(audit.text, "4 commits")
        assert.notInclude(audit.text, name)
      }),
    240_000
  )

  it.effect(
    "keeps the objects a fork begun before it still copies, so the fork finishes whole",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const forking = "purge-forking"
        const target = "purge-forked-before"
        const texts = (bank: string) =>
          Effect.map(
            ok("GET", `${bankPath(bank)}/memories/list?limit=1000`),
            (r) => (r.body.items as Array<{ text: string }>).map((item) => item.text).sort()
          )
        yield* ok("POST", `${bankPath(forking)}/memories`, {
          items: [
            about("keeps the spare office key under the blue flowerpot."),
            about("moved to Lisbon in March to lead the design team."),
            ...Array.from({ length: 12 }, (_, n) => ({ content: `Marguerite repotted fern ${n} in the lobby.` }))
          ]
        })
        yield* settled(forking)
        const repo = (yield* ok("POST", `${bankPath(forking)}/repos/enable`, {})).body
        const expected = yield* texts(forking)
        assert.isTrue(expected.some((text) => text.includes(name)))
        // A fork of the first commit, begun and left before its first slice (what a restart right after the request
        // leaves): its bank and its job row, as the fork call writes them.
        const head = repo.head_commit_id as string
        yield* sql`INSERT INTO banks (bank_id) VALUES (${target})`
        yield* sql`INSERT INTO repo_forks (target_bank_id, source_repo_id, tables, row_counts, progress, request)
          SELECT ${target}, repo_id, tables, row_counts, ${JSON.stringify(startForkProgress)}::jsonb,
            ${
          JSON.stringify({ target_bank_id: target, source_commit_id: head, ref: `commit:${head}`, commitId: head })
        }::jsonb
          FROM repo_commits WHERE commit_id = ${head}`

        const report = (yield* ok("POST", `${bankPath(forking)}/forget`, { entity: name, purge_history: true })).body
        assert.deepStrictEqual(report.repo_commits.rewrites.map((r: any) => r.old_commit_id), [head])
        assert.notInclude((yield* ok("GET", `${bankPath(forking)}/memories/list?limit=1000`)).text, name)

        // The same fork call resumes the job: the copy is the commit as it was when the fork was asked for.
        yield* ok("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
          target_bank_id: target,
          source_commit_id: head
        })
        assert.deepStrictEqual(yield* texts(target), expected, "the fork lost rows the purge deleted")
      }),
    240_000
  )

  it.effect(
    "takes the forgotten part out of a document's text in every commit that keeps the document",
    () =>
      Effect.gen(function*() {
        const bank = "purge-document-text"
        const lasting = "Marguerite waters the office plants every Monday."
        const documentText = (target: string) =>
          Effect.map(
            ok("GET", `${bankPath(target)}/documents/notes`),
            (r) => r.body.original_text as string
          )
        yield* ok("POST", `${bankPath(bank)}/memories`, { items: [{ content: lasting, document_id: "notes" }] })
        yield* settled(bank)
        const repo = (yield* ok("POST", `${bankPath(bank)}/repos/enable`, {})).body
        // An appended item about the entity: the document's one text holds both items from the second commit on.
        yield* ok("POST", `${bankPath(bank)}/memories`, {
          items: [{
            ...about("keeps the spare office key under the blue flowerpot."),
            document_id: "notes",
            update_mode: "append"
          }]
        })
        yield* settled(bank)
        yield* ok("POST", `/v1/default/repos/${repo.repo_id}/commit`, { message: "appended" })
        assert.include(yield* documentText(bank), name)

        yield* ok("POST", `${bankPath(bank)}/forget`, { entity: name, purge_history: true })
        assert.notInclude(yield* documentText(bank), name)
        assert.include(yield* documentText(bank), lasting)
        const commits = (yield* ok("GET", `/v1/default/repos/${repo.repo_id}/log?limit=10`)).body.commits as Array<any>
        assert.strictEqual(commits.length, 2)
        for (const [i, commit] of commits.entries()) {
          const target = `purge-document-text-${i}`
          yield* ok("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
            target_bank_id: target,
            source_commit_id: commit.commit_id
          })
          const text = yield* documentText(target)
          assert.notInclude(text, name, `commit "${commit.message}" still holds the forgotten part of the document`)
          assert.notInclude(text, "flowerpot")
          assert.strictEqual(text, lasting, commit.message)
        }
      }),
    240_000
  )
})
