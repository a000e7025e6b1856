/**
 * This repository as a codebase: `src/` zipped in the test and imported, with spot checks a developer would agree
 * with (`Recall` depends on the keyword index; a domain schema file's impact reaches its HTTP handlers); approval
 * makes chunks recallable with `path:line` provenance. Then the same tree through a fixture git host on loopback:
 * refresh answers `noop` without an operation while the head is unchanged, and after a one-file change builds a
 * new snapshot that re-parses only that file. A git host on a private address is refused unless allowed.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { codebasesPath, settled, upload } from "../support/CodebaseClient.ts"
import { type FakeGitHost, fakeGitHost } from "../support/FakeGitHost.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { makeZip, type ZipEntry } from "../support/ZipWriter.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))

const walk = (directory: string): Array<string> =>
  readdirSync(directory).flatMap((name) => {
    const path = join(directory, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })

/** `src/` of this checkout plus `package.json` (so the archive has no single top folder to strip). */
const repositoryEntries = (prefix = ""): Array<ZipEntry> =>
  [...walk(join(root, "src")), join(root, "package.json")].sort()
    .map((path) => ({ name: `${prefix}${relative(root, path)}`, data: new Uint8Array(readFileSync(path)) }))

class GitHost extends Context.Service<GitHost, FakeGitHost>()("test/http/codebases-repository/GitHost") {}

const withGitHost = Layer.unwrap(Effect.gen(function*() {
  const host = yield* GitHost
  return testApp({
    codebases: { ...defaultCodebaseSettings, githostApiUrl: host.origin, githostAllowPrivateNetworks: true }
  })
})).pipe(Layer.provideMerge(Layer.effect(GitHost, fakeGitHost("acme", "engram"))))

const long = Duration.seconds(240)

layer(withGitHost, { excludeTestServices: true, timeout: long })("this repository as a codebase", (it) => {
  it.effect("parses src/ into symbols and impact edges a developer agrees with; approval makes chunks recallable", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-self"
      const base = codebasesPath(bankId)
      const imported = yield* upload(
        server,
        `${base}/import/zip`,
        "archive",
        "engram.zip",
        makeZip(repositoryEntries()),
        { name: "engram" }
      )
      assert.strictEqual(imported.status, 200, imported.text)
      const operation = yield* settled(server, bankId, imported.body.operation_id, long)
      assert.strictEqual(operation.status, "completed", JSON.stringify(operation))
      const id = imported.body.codebase_id
      const codebase = (yield* server.request("GET", `${base}/${id}`)).body
      assert.isAbove(codebase.stats.indexed_files, 200)
      assert.isAbove(codebase.stats.symbol_count, 1000)
      assert.isAbove(codebase.parse_coverage, 0.95)
      assert.isAbove(codebase.stats.call_edge_count, 500)

      const recall = (yield* server.request("GET", `${base}/${id}/symbols?q=Recall&kind=class`)).body.items[0]
      assert.strictEqual(recall.path, "src/memory/recall/Recall.ts")
      assert.strictEqual(recall.match, "exact")
      // Recall depends on the keyword index: a change to it reaches Recall through the keyword search module.
      const keyword = (yield* server.request("POST", `${base}/${id}/impact`, {
        json: { path: "src/brain/keyword/KeywordIndex.ts", max_depth: 3, limit: 200 }
      })).body
      const reached = new Map(keyword.impacted_files.map((file: any) => [file.path, file.depth]))
      assert.strictEqual(reached.get("src/memory/recall/keyword/KeywordSearch.ts"), 1)
      // Recall's sources reach the index through the keyword search (and call its search directly: a call edge when
      // the call is resolved to it); Recall reaches it through its sources.
      assert.oneOf(reached.get("src/memory/recall/RecallSources.ts"), [1, 2], keyword.explanation)
      assert.oneOf(reached.get("src/memory/recall/Recall.ts"), [2, 3], keyword.explanation)
      const calls =
        (yield* server.request("POST", `${base}/${id}/impact`, { json: { symbol: "keywordInMemory", max_depth: 1 } }))
          .body
      assert.isTrue(
        calls.edges.some((edge: any) =>
          edge.edge_type === "calls" && edge.from_path === "src/memory/recall/RecallSources.ts"
        )
      )
      // A domain schema file's impact reaches the handlers that serve it.
      const domain = (yield* server.request("POST", `${base}/${id}/impact`, {
        json: { path: "src/domain/Anomaly.ts", max_depth: 4, limit: 200 }
      })).body
      assert.includeMembers(domain.impacted_files.map((file: any) => file.path), [
        "src/http/api/AnomalyApi.ts",
        "src/http/handlers/AnomalyHandlers.ts"
      ])

      // Approve only two chunks: everything auto-routed to memory goes back to review first.
      const memory: Array<string> = []
      let cursor: string | null = null
      do {
        const page: any = (yield* server.request(
          "GET",
          `${base}/${id}/chunks?route_target=memory&limit=100${cursor ? `&cursor=${cursor}` : ""}`
        )).body
        memory.push(...page.items.map((chunk: any) => chunk.id))
        cursor = page.next_cursor
      } while (cursor !== null)
      if (memory.length > 0) {
        yield* server.request("POST", `${base}/${id}/review/route`, { json: { item_ids: memory, target: "unrouted" } })
      }
      const keywordClass =
        (yield* server.request("GET", `${base}/${id}/chunks?path_prefix=src/brain/keyword/KeywordIndex.ts&kind=class`))
          .body.items[0]
      assert.strictEqual(keywordClass.label, "KeywordIndex")
      const routed = yield* server.request("POST", `${base}/${id}/review/route`, {
        json: { item_ids: [keywordClass.id], target: "memory", queue_memory_import: true }
      })
      const approval = yield* settled(server, bankId, routed.body.operation_id, long)
      assert.strictEqual(approval.status, "completed", JSON.stringify(approval))
      const recalled = (yield* server.request("POST", `/v1/default/banks/${bankId}/memories/recall`, {
        json: { query: "KeywordIndex class search terms" }
      })).body
      const provenance = `src/brain/keyword/KeywordIndex.ts:${keywordClass.start_line}-${keywordClass.end_line}`
      assert.isTrue(
        recalled.results.some((memory: any) => String(memory.context).startsWith(provenance)),
        JSON.stringify(recalled.results.map((memory: any) => memory.context))
      )
    }))

  it.effect("imports through the git host, answers noop for an unchanged head, and re-parses only a changed file", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* GitHost
      const bankId = "cb-githost"
      const base = codebasesPath(bankId)
      const entries = repositoryEntries("acme-engram-1111/")
      host.push("1111", makeZip(entries))
      const imported = yield* server.request("POST", `${base}/import/githost`, {
        json: { repo_url: "https://github.com/acme/engram" }
      })
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.resolved_commit_sha, "1111")
      yield* settled(server, bankId, imported.body.operation_id, long)
      const id = imported.body.codebase_id
      assert.isTrue(host.requests.includes("/codeload/1111"), "the zipball redirect was followed")

      const noop = (yield* server.request("POST", `${base}/${id}/refresh`, { json: {} })).body
      assert.deepStrictEqual(noop, {
        snapshot_id: imported.body.snapshot_id,
        operation_id: null,
        status: "completed",
        changed_files: 0,
        added_files: 0,
        deleted_files: 0,
        noop: true
      })

      const target = "acme-engram-2222/src/domain/Anomaly.ts"
      const changed = entries.map((entry) => {
        const name = entry.name.replace("acme-engram-1111/", "acme-engram-2222/")
        return name === target
          ? { name, data: `${Buffer.from(entry.data).toString("utf8")}\nexport const refreshMarker = 1\n` }
          : { ...entry, name }
      })
      host.push("2222", makeZip(changed))
      const refreshed = (yield* server.request("POST", `${base}/${id}/refresh`, { json: {} })).body
      assert.isFalse(refreshed.noop)
      assert.strictEqual(refreshed.changed_files, 1)
      assert.strictEqual(refreshed.added_files, 0)
      assert.strictEqual(refreshed.deleted_files, 0)
      const operation = yield* settled(server, bankId, refreshed.operation_id, long)
      assert.strictEqual(operation.status, "completed", JSON.stringify(operation))
      const codebase = (yield* server.request("GET", `${base}/${id}`)).body
      assert.strictEqual(codebase.current_snapshot_id, refreshed.snapshot_id)
      assert.strictEqual(codebase.source_commit_sha, "2222")
      assert.strictEqual(codebase.stats.reparsed_files, 1)
      assert.isAbove(codebase.stats.reused_parses, 200)
      const files = (yield* server.request("GET", `${base}/${id}/files?changed_only=true`)).body.items
      assert.deepStrictEqual(files.map((file: any) => file.path), ["src/domain/Anomaly.ts"])
      const marker = (yield* server.request("GET", `${base}/${id}/symbols?q=refreshMarker`)).body.items
      assert.strictEqual(marker[0].path, "src/domain/Anomaly.ts")
      // Unchanged chunks inherit their routes.
      const inherited = (yield* server.request("GET", `${base}/${id}/chunks?route_source=inherited&limit=1`)).body.items
      assert.strictEqual(inherited.length, 1)

      const unknownRef = yield* server.request("POST", `${base}/${id}/refresh`, { json: { ref: "no-such-branch" } })
      assert.strictEqual(unknownRef.status, 400)
      assert.include(unknownRef.body.detail, "default branch: 'main'")
    }))
})

const guarded = Layer.unwrap(Effect.gen(function*() {
  const host = yield* GitHost
  return testApp({ codebases: { ...defaultCodebaseSettings, githostApiUrl: host.origin } })
})).pipe(Layer.provideMerge(Layer.effect(GitHost, fakeGitHost("acme", "engram"))))

layer(guarded, { excludeTestServices: true })("git host on a private network", (it) => {
  it.effect("is refused unless SERVICE_API_GITHOST_ALLOW_PRIVATE_NETWORKS is set, and nothing is stored", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const host = yield* GitHost
      host.push("1111", makeZip([{ name: "x/a.ts", data: "export const a = 1\n" }]))
      const response = yield* server.request("POST", `${codebasesPath("cb-guard")}/import/githost`, {
        json: { owner: "acme", repo: "engram" }
      })
      assert.strictEqual(response.status, 400, response.text)
      assert.include(response.body.detail, "not a public address")
      assert.deepStrictEqual(host.requests, [])
      const listed = yield* server.request("GET", codebasesPath("cb-guard"))
      assert.deepStrictEqual(listed.body.items, [])
    }))
})
