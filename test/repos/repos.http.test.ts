/**
 * Memory repos over HTTP: enable and summaries, commit (no empty commits), status and row-level diff, hard reset
 * restoring recall exactly, branches that diverge and are read by `branch_name` without checkout, checkout,
 * forks that answer recall like their source, hidden workspaces, and the 4xx answers.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { recallResults, settled } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`

const settle = settled

layer(testApp(), { excludeTestServices: true })("memory repos", (it) => {
  const setup = (id: string, facts: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank(id), { json: { name: id } })
      const retained = yield* server.request("POST", `${bank(id)}/memories`, {
        json: { items: facts.map((content) => ({ content })) }
      })
      assert.strictEqual(retained.status, 200, retained.text)
      yield* settle(id)
      const enabled = yield* server.request("POST", `${bank(id)}/repos/enable`, { json: { repo_name: `${id} repo` } })
      assert.strictEqual(enabled.status, 200, enabled.text)
      return enabled.body
    })
  const recall = recallResults
  const retain = (id: string, content: string) =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const response = yield* server.request("POST", `${bank(id)}/memories`, { json: { items: [{ content }] } })
      assert.strictEqual(response.status, 200, response.text)
      yield* settle(id)
    })

  it.effect("enable creates main with an initial commit; a second commit without change answers HEAD", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const repo = yield* setup("repo-basic", ["Alice moved to Paris in 2020.", "Bob plays the cello."])
      assert.strictEqual(repo.root_bank_id, "repo-basic")
      assert.strictEqual(repo.name, "repo-basic repo")
      assert.strictEqual(repo.active_branch, "main")
      assert.strictEqual(repo.head_message, "Initial commit")
      assert.deepStrictEqual(repo.branches.map((b: any) => [b.branch_name, b.is_active, b.dirty]), [[
        "main",
        true,
        false
      ]])
      const again = yield* server.request("POST", `${bank("repo-basic")}/repos/enable`)
      assert.strictEqual(again.body.repo_id, repo.repo_id)

      const same = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, {
        json: { message: "nothing" }
      })
      assert.strictEqual(same.status, 200, same.text)
      assert.strictEqual(same.body.created, false)
      assert.strictEqual(same.body.commit_id, repo.head_commit_id)

      const ofBank = yield* server.request("GET", `${bank("repo-basic")}/repo`)
      assert.strictEqual(ofBank.body.repo.repo_id, repo.repo_id)
      const none = yield* server.request("GET", `${bank("repo-basic-none")}/repo`)
      assert.strictEqual(none.status, 404)
      const listed = yield* server.request("GET", "/v1/default/repos")
      assert.include(listed.body.repos.map((r: any) => r.repo_id), repo.repo_id)
      const got = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}`)
      assert.strictEqual(got.body.head_commit_id, repo.head_commit_id)
      const branches = yield* server.request("GET", `${bank("repo-basic")}/repo/branches`)
      assert.deepStrictEqual(branches.body.branches.map((b: any) => b.branch_name), ["main"])
    }))

  it.effect("commit → change → status and diff show the changed rows → reset restores recall exactly", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const repo = yield* setup("repo-reset", [
        "Carol founded a bakery in Lyon.",
        "The bakery sells sourdough bread every morning.",
        "Dan repairs bicycles on weekends."
      ])
      const before = yield* recall("repo-reset", "bakery bread")
      assert.isAbove(before.length, 0)
      yield* retain("repo-reset", "The bakery in Lyon closed its doors and now sells bread online only.")
      const status = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}/status`)
      assert.strictEqual(status.body.dirty, true)
      assert.include(status.body.changed_components, "memory_units")
      assert.isAbove(status.body.table_deltas.memory_units.added, 0)
      assert.strictEqual(status.body.table_deltas.memory_units.removed, 0)

      const diff = yield* server.request(
        "GET",
        `/v1/default/repos/${repo.repo_id}/diff?include_workspace=true&rows=true&table=memory_units`
      )
      assert.strictEqual(diff.status, 200, diff.text)
      assert.strictEqual(diff.body.to_ref, "workspace:main")
      assert.strictEqual(diff.body.rows.total, diff.body.table_deltas.memory_units.added)
      assert.isTrue(diff.body.rows.items.every((row: any) => row.table === "memory_units" && row.change === "added"))

      const refused = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/reset-hard`, {
        json: { commit_id: repo.head_commit_id }
      })
      assert.strictEqual(refused.status, 400)
      assert.include(refused.body.detail, "dirty")
      assert.notDeepEqual(yield* recall("repo-reset", "bakery bread"), before)

      const reset = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/reset-hard`, {
        json: { commit_id: repo.head_commit_id, force: true }
      })
      assert.strictEqual(reset.status, 200, reset.text)
      assert.strictEqual(reset.body.dirty, false)
      assert.deepStrictEqual(yield* recall("repo-reset", "bakery bread"), before)
    }))

  it.effect("a second commit stores only what changed; log walks back; diff between commits lists changed rows", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const facts = Array.from(
        { length: 40 },
        (_, i) => `Fact number ${i}: station ${i} measures rainfall in valley ${i}.`
      )
      const repo = yield* setup("repo-bytes", facts)
      const log0 = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}/log`)
      const first = log0.body.commits[0]
      assert.isAbove(first.stats.bytes_added, 0)
      yield* retain("repo-bytes", "Station 7 was moved uphill in March.")
      const second = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, {
        json: { message: "one more", actor: "tester" }
      })
      assert.strictEqual(second.body.created, true)
      assert.strictEqual(second.body.parent_commit_id, first.commit_id)
      assert.strictEqual(second.body.actor, "tester")
      assert.isBelow(second.body.stats.bytes_added, first.stats.bytes_added / 4)

      const log = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}/log?limit=1&offset=1`)
      assert.deepStrictEqual(log.body.commits.map((c: any) => c.commit_id), [first.commit_id])
      const diff = yield* server.request(
        "GET",
        `/v1/default/repos/${repo.repo_id}/diff?from_commit_id=${first.commit_id}&to_commit_id=${second.body.commit_id}&rows=true&limit=2`
      )
      assert.strictEqual(diff.body.from_ref, `commit:${first.commit_id}`)
      assert.isAbove(diff.body.table_deltas.memory_units.added, 0)
      assert.isAtMost(diff.body.rows.items.length, 2)
      assert.isAbove(diff.body.rows.total, 0)
    }))

  it.effect("branches diverge, are read by branch_name without checkout, and checkout swaps the working trees", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const repo = yield* setup("repo-branches", ["Erin keeps bees in her garden."])
      const created = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/branches`, {
        json: { branch_name: "experiment" }
      })
      assert.strictEqual(created.status, 200, created.text)
      assert.strictEqual(created.body.is_active, false)
      assert.strictEqual(created.body.dirty, false)
      assert.match(created.body.workspace_bank_id, /^__repo__/)
      const listedBanks = yield* server.request("GET", "/v1/default/banks")
      assert.isFalse(listedBanks.body.banks.some((b: any) => b.bank_id.startsWith("__repo__")))

      yield* retain("repo-branches", "Erin's hives produced forty jars of lavender honey.")
      const onMain = yield* recall("repo-branches", "lavender honey jars")
      const onExperiment = yield* recall("repo-branches", "lavender honey jars", "experiment")
      assert.isTrue(onMain.some((r: any) => r.text.includes("lavender")))
      assert.isFalse(onExperiment.some((r: any) => r.text.includes("lavender")))
      const unknown = yield* server.request("POST", `${bank("repo-branches")}/memories/recall`, {
        json: { query: "honey", branch_name: "nope" }
      })
      assert.strictEqual(unknown.status, 404)
      const listMain = yield* server.request("GET", `${bank("repo-branches")}/memories/list?branch_name=main`)
      const listExperiment = yield* server.request(
        "GET",
        `${bank("repo-branches")}/memories/list?branch_name=experiment`
      )
      assert.isAbove(listMain.body.total, listExperiment.body.total)
      const docs = yield* server.request("GET", `${bank("repo-branches")}/documents?branch_name=experiment`)
      assert.strictEqual(docs.status, 200, docs.text)

      yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/commit`, { json: { message: "honey" } })
      const checkout = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/checkout`, {
        json: { branch_name: "experiment" }
      })
      assert.strictEqual(checkout.status, 200, checkout.text)
      assert.strictEqual(checkout.body.active_branch, "experiment")
      assert.isFalse(
        (yield* recall("repo-branches", "lavender honey jars")).some((r: any) => r.text.includes("lavender"))
      )
      assert.isTrue(
        (yield* recall("repo-branches", "lavender honey jars", "main")).some((r: any) => r.text.includes("lavender"))
      )
      // Background work of the bank itself (e.g. a dream run) may write after the checkout; the memories,
      // documents and entities moved between the working trees must compare clean in root-bank ids.
      const moved = ["memory_units", "memory_links", "unit_entities", "entities", "documents", "chunks"]
      for (const branch of ["experiment", "main"]) {
        const status = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}/status?branch_name=${branch}`)
        assert.deepStrictEqual(
          status.body.changed_components.filter((table: string) => moved.includes(table)),
          [],
          JSON.stringify(status.body)
        )
      }
      const branches = yield* server.request("GET", `/v1/default/repos/${repo.repo_id}/branches`)
      assert.deepStrictEqual(branches.body.branches.map((b: any) => [b.branch_name, b.is_active]), [
        ["experiment", true],
        ["main", false]
      ])
      const back = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/checkout`, {
        json: { branch_name: "main" }
      })
      assert.strictEqual(back.body.active_branch, "main")
      assert.deepStrictEqual(yield* recall("repo-branches", "lavender honey jars"), onMain)
    }))

  it.effect("a fork answers recall like its source; fork rules are enforced", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const repo = yield* setup("repo-fork", ["Frank builds wooden boats.", "The boats are painted blue."])
      const forked = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        json: { target_bank_id: "repo-fork-copy", target_bank_name: "Copy", enable_repo: true }
      })
      assert.strictEqual(forked.status, 200, forked.text)
      assert.strictEqual(forked.body.bank_name, "Copy")
      assert.strictEqual(forked.body.source_ref, "branch:main")
      assert.strictEqual(forked.body.repo_enabled, true)
      assert.strictEqual(forked.body.repo.root_bank_id, "repo-fork-copy")
      const source = yield* recall("repo-fork", "wooden boats blue")
      const copy = yield* recall("repo-fork-copy", "wooden boats blue")
      assert.deepStrictEqual(copy.map((r: any) => r.text), source.map((r: any) => r.text))
      assert.isFalse(copy.some((r: any) => source.some((s: any) => s.id === r.id)))

      const exists = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        json: { target_bank_id: "repo-fork-copy" }
      })
      assert.strictEqual(exists.status, 409)
      const both = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        json: { target_bank_id: "repo-fork-2", source_branch: "main", source_commit_id: repo.head_commit_id }
      })
      assert.strictEqual(both.status, 400)
      const hidden = yield* server.request("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, {
        json: { target_bank_id: "__repo__x" }
      })
      assert.strictEqual(hidden.status, 400)
      assert.include(hidden.body.detail, "target_bank_id")
    }))

  it.effect("create clones a source bank; unknown repos, commits and branches are 404; bad bodies are 400", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* server.request("PUT", bank("repo-src"), { json: {} })
      yield* retain("repo-src", "Gina teaches chemistry at the high school.")
      const created = yield* server.request("POST", "/v1/default/repos", {
        json: { bank_id: "repo-clone", source_bank_id: "repo-src" }
      })
      assert.strictEqual(created.status, 200, created.text)
      assert.isTrue((yield* recall("repo-clone", "chemistry teacher")).some((r: any) => r.text.includes("chemistry")))
      const twice = yield* server.request("POST", "/v1/default/repos", { json: { bank_id: "repo-clone" } })
      assert.strictEqual(twice.status, 409)
      assert.strictEqual((yield* server.request("GET", "/v1/default/repos/nope")).status, 404)
      const id = created.body.repo_id
      assert.strictEqual((yield* server.request("GET", `/v1/default/repos/${id}/status?branch_name=nope`)).status, 404)
      const reset = yield* server.request("POST", `/v1/default/repos/${id}/reset-hard`, { json: { commit_id: "nope" } })
      assert.strictEqual(reset.status, 404)
      const badCommit = yield* server.request("POST", `/v1/default/repos/${id}/commit`, { json: { message: "" } })
      assert.strictEqual(badCommit.status, 400)
      assert.include(badCommit.body.detail, "message")
      const badBranch = yield* server.request("POST", `/v1/default/repos/${id}/branches`, {
        json: { branch_name: "../x" }
      })
      assert.strictEqual(badBranch.status, 400)
      assert.include(badBranch.body.detail, "branch_name")
      const dup = yield* server.request("POST", `/v1/default/repos/${id}/branches`, { json: { branch_name: "main" } })
      assert.strictEqual(dup.status, 409)
    }))
})
