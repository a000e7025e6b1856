/**
 * The knowledge base over HTTP, driven by the published Hindsight client 0.9.1 itself (its `HindsightClient` and
 * its generated functions): folders and pages in a tree, a page built in the background and read as markdown,
 * search, the export bundle, renames and moves, subtree deletion; moves that would make a cycle, bad names and
 * page options on folders refused with 400 naming the field; unknown banks, pages and nodes 404; the tree goes
 * with its bank and a page with its mental model.
 */
import { assert, layer } from "@effect/vitest"
import {
  type Client,
  createClient,
  createConfig,
  HindsightClient,
  type KnowledgeNode,
  type KnowledgePageResponse,
  sdk
} from "@vectorize-io/hindsight-client"
import { Duration, Effect } from "effect"
import { bankPath, call, ok, operationFinished } from "../support/HttpCalls.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually } from "../support/TestTasks.ts"

const kb = (bank: string) => `${bankPath(bank)}/knowledge-base`

const clients = Effect.map(TestServer, (server) => ({
  client: new HindsightClient({ baseUrl: server.url }),
  raw: createClient(createConfig({ baseUrl: server.url })) as Client
}))

const run = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Every field of the client's `KnowledgeNode`, with the type the client declares. */
const assertNode = (node: KnowledgeNode, kind: "folder" | "page") => {
  assert.isString(node.id)
  assert.strictEqual(node.kind, kind)
  assert.isString(node.name)
  assert.isTrue(node.parent_id === null || typeof node.parent_id === "string", "parent_id")
  assert.strictEqual(typeof node.managed, "boolean")
  assert.isArray(node.tags)
  assert.isTrue(node.timestamp === null || !Number.isNaN(Date.parse(node.timestamp!)), "timestamp is a date")
  if (kind === "page") {
    assert.isString(node.mental_model_id)
    assert.isString(node.description)
  } else {
    assert.isNull(node.mental_model_id)
    assert.isNull(node.description)
  }
  for (const child of node.children ?? []) assertNode(child, child.kind)
}

const assertPage = (page: KnowledgePageResponse) => {
  for (const field of ["id", "name", "type", "markdown"] as const) assert.isString(page[field], field)
  assert.isArray(page.tags)
  assert.isTrue(page.body === null || typeof page.body === "string", "body")
  assert.isTrue(page.description === null || typeof page.description === "string", "description")
  assert.isTrue(page.markdown.startsWith("---\n"), "markdown opens with frontmatter")
}

const fieldsOf = (body: any): Array<string> => body.errors.map((error: any) => error.field)

layer(testApp({ operationRetryBase: Duration.millis(5) }), { excludeTestServices: true })("knowledge base", (it) => {
  it.effect("the published client builds a tree, reads a built page, searches, exports, moves and deletes", () =>
    Effect.gen(function*() {
      const { client } = yield* clients
      yield* ok("PUT", bankPath("kb-client"), {})
      yield* ok("POST", `${bankPath("kb-client")}/memories`, {
        items: [{ content: "Alice prefers green tea in the morning." }, {
          content: "Alice drinks espresso after lunch."
        }]
      })

      const guides = yield* run(() => client.createKnowledgeFolder("kb-client", "Guides"))
      assertNode(guides, "folder")
      assert.strictEqual(guides.name, "Guides")
      assert.isNull(guides.parent_id)
      const drinks = yield* run(() => client.createKnowledgeFolder("kb-client", "Drinks", { parentId: guides.id }))
      assert.strictEqual(drinks.parent_id, guides.id)

      const created = yield* run(() =>
        client.createKnowledgePage("kb-client", "Alice's drinks", "What does Alice drink?", {
          parentId: drinks.id,
          tags: ["type:profile"]
        })
      )
      assert.isString(created.page_id)
      assert.isString(created.mental_model_id)
      assert.isString(created.operation_id)
      const built = yield* operationFinished("kb-client", created.operation_id!)
      assert.strictEqual(built.status, "completed", JSON.stringify(built))

      const tree = yield* run(() => client.getKnowledgeBaseTree("kb-client"))
      assert.strictEqual(tree.roots.length, 1)
      const root = tree.roots[0]!
      assertNode(root, "folder")
      assert.strictEqual(root.id, guides.id)
      const page = root.children![0]!.children![0]!
      assertNode(page, "page")
      assert.strictEqual(page.id, created.page_id)
      assert.strictEqual(page.mental_model_id, created.mental_model_id)
      assert.strictEqual(page.description, "What does Alice drink?")
      assert.deepStrictEqual(page.tags, ["type:profile"])
      assert.strictEqual(page.is_stale, false, "nothing was written since the page was built")
      assert.isNull(root.is_stale, "folders are never stale")

      const read = yield* run(() => client.getKnowledgePage("kb-client", created.page_id))
      assertPage(read)
      assert.strictEqual(read.id, created.page_id)
      assert.strictEqual(read.name, "Alice's drinks")
      assert.strictEqual(read.type, "profile")
      assert.isString(read.body)
      assert.include(read.markdown, `id: "${created.page_id}"`)
      assert.include(read.markdown, `description: "What does Alice drink?"`)
      assert.isTrue(read.markdown.trimEnd().endsWith(read.body!.trimEnd()), "the body follows the frontmatter")

      const hits = yield* run(() => client.searchKnowledgeBase("kb-client", "drinks of Alice", { limit: 5 }))
      assert.strictEqual(hits.total, 1)
      const hit = hits.results[0]!
      assert.strictEqual(hit.id, created.page_id)
      assert.strictEqual(hit.mental_model_id, created.mental_model_id)
      assert.isString(hit.snippet)
      assert.isAbove(hit.score, 0)
      assert.isString(hit.updated_at)
      const none = yield* run(() => client.searchKnowledgeBase("kb-client", "quantum chromodynamics"))
      assert.deepStrictEqual(none, { results: [], total: 0 })

      const bundle = yield* run(() => client.exportKnowledgeBase("kb-client"))
      const paths = bundle.files.map((file) => file.path)
      assert.deepStrictEqual(paths, ["index.md", `${created.page_id}.md`, `log/${created.page_id}.md`])
      const index = bundle.files[0]!.content
      assert.include(index, "- Guides/\n  - Drinks/\n    - [Alice's drinks](" + created.page_id + ".md)")
      assert.strictEqual(bundle.files[1]!.content, read.markdown)
      assert.include(bundle.files[2]!.content, "created refresh")

      // A write after the build makes the page possibly stale.
      yield* ok("POST", `${bankPath("kb-client")}/memories`, { items: [{ content: "Alice gave up coffee in May." }] })
      const after = yield* run(() => client.getKnowledgeBaseTree("kb-client"))
      assert.strictEqual(after.roots[0]!.children![0]!.children![0]!.is_stale, true)

      const renamed = yield* run(() =>
        client.updateKnowledgeNode("kb-client", created.page_id, {
          name: "Alice: drinks",
          parentId: null,
          tags: ["tea"]
        })
      )
      assertNode(renamed, "page")
      assert.strictEqual(renamed.name, "Alice: drinks")
      assert.isNull(renamed.parent_id)
      assert.deepStrictEqual(renamed.tags, ["tea"])
      const model = yield* ok("GET", `${bankPath("kb-client")}/mental-models/${created.mental_model_id}`)
      assert.strictEqual(model.body.name, "Alice: drinks", "the page's mental model keeps its name in step")

      const deleted = yield* run(() => client.deleteKnowledgeNode("kb-client", guides.id)) as Effect.Effect<any>
      assert.deepStrictEqual(deleted, { success: true, node_id: guides.id, deleted_count: 2, deleted_pages: 0 })
      const left = yield* run(() => client.getKnowledgeBaseTree("kb-client"))
      assert.deepStrictEqual(left.roots.map((node) => node.id), [created.page_id])
    }))

  it.effect("deleting a folder removes its subtree and the pages' mental models; a new source query rebuilds", () =>
    Effect.gen(function*() {
      const { client } = yield* clients
      yield* ok("PUT", bankPath("kb-delete"), {})
      const top = yield* run(() => client.createKnowledgeFolder("kb-delete", "Top"))
      const inner = yield* run(() => client.createKnowledgeFolder("kb-delete", "Inner", { parentId: top.id }))
      const a = yield* run(() => client.createKnowledgePage("kb-delete", "A", "What is A?", { parentId: top.id }))
      const b = yield* run(() => client.createKnowledgePage("kb-delete", "B", "What is B?", { parentId: inner.id }))
      const kept = yield* run(() => client.createKnowledgePage("kb-delete", "Kept", "What is kept?"))

      const changed = yield* ok("PATCH", `${kb("kb-delete")}/nodes/${kept.page_id}`, { source_query: "What stays?" })
      assert.strictEqual(changed.body.description, "What stays?")
      // The new question is built in the background: the model's history gains a build for it.
      yield* eventually(
        Effect.map(
          call("GET", `${bankPath("kb-delete")}/mental-models/${kept.mental_model_id}/history`),
          (r) => r.body
        ),
        (history: any) => Array.isArray(history) && history.some((entry: any) => entry.source_query === "What stays?"),
        Duration.seconds(60)
      )

      const removed = yield* ok("DELETE", `${kb("kb-delete")}/nodes/${top.id}`)
      assert.deepStrictEqual(removed.body, { success: true, node_id: top.id, deleted_count: 4, deleted_pages: 2 })
      for (const id of [a.mental_model_id, b.mental_model_id]) {
        assert.strictEqual((yield* call("GET", `${bankPath("kb-delete")}/mental-models/${id}`)).status, 404)
      }
      for (const id of [top.id, inner.id, a.page_id, b.page_id]) {
        assert.strictEqual((yield* call("DELETE", `${kb("kb-delete")}/nodes/${id}`)).status, 404)
      }
      const tree = yield* ok("GET", `${kb("kb-delete")}/tree`)
      assert.deepStrictEqual(tree.body.roots.map((node: any) => node.id), [kept.page_id])

      // Deleting a page's mental model through its own API takes the page out of the tree too.
      yield* ok("DELETE", `${bankPath("kb-delete")}/mental-models/${kept.mental_model_id}`)
      assert.deepStrictEqual((yield* ok("GET", `${kb("kb-delete")}/tree`)).body.roots, [])
    }))

  it.effect("moves that would make a cycle, parents that are pages or missing, and bad fields are 400s naming the field", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      yield* ok("PUT", bankPath("kb-rules"), {})
      const folder = (name: string, parent_id?: string) =>
        Effect.map(ok("POST", `${kb("kb-rules")}/folders`, { name, ...(parent_id ? { parent_id } : {}) }), (r) => {
          assert.strictEqual(r.status, 201)
          return r.body.id as string
        })
      const outer = yield* folder("Outer")
      const middle = yield* folder("Middle", outer)
      const deepest = yield* folder("Deepest", middle)
      const page =
        (yield* ok("POST", `${kb("kb-rules")}/pages`, { name: "P", source_query: "What?", parent_id: outer }))
          .body.page_id as string

      const refused = (path: string, json: unknown, field: string, text: string) =>
        Effect.gen(function*() {
          const response = yield* call(path.includes("/nodes/") ? "PATCH" : "POST", path, json)
          assert.strictEqual(response.status, 400, response.text)
          assert.deepStrictEqual(fieldsOf(response.body), [field])
          assert.strictEqual(response.body.errors[0].location, "body")
          assert.include(response.body.detail, text)
        })
      const node = (id: string) => `${kb("kb-rules")}/nodes/${id}`
      yield* refused(node(outer), { parent_id: deepest }, "parent_id", "into itself or one of its own subfolders")
      yield* refused(node(outer), { parent_id: outer }, "parent_id", "into itself")
      yield* refused(node(middle), { parent_id: page }, "parent_id", "is a page")
      yield* refused(node(middle), { parent_id: "no-such-folder" }, "parent_id", "no folder 'no-such-folder'")
      yield* refused(`${kb("kb-rules")}/folders`, { name: "X", parent_id: page }, "parent_id", "is a page")
      yield* refused(
        `${kb("kb-rules")}/pages`,
        { name: "X", source_query: "Q?", parent_id: "gone" },
        "parent_id",
        "no folder"
      )
      yield* refused(`${kb("kb-rules")}/folders`, { name: "   " }, "name", "must not be empty")
      yield* refused(`${kb("kb-rules")}/folders`, { name: "two\nlines" }, "name", "single line")
      yield* refused(`${kb("kb-rules")}/pages`, { name: "X", source_query: "" }, "source_query", "must not be empty")
      yield* refused(`${kb("kb-rules")}/pages`, { name: "X", source_query: "Q?", max_tokens: 10 }, "max_tokens", "256")
      yield* refused(node(outer), { source_query: "Why?" }, "source_query", "only pages")
      const missing = yield* call("POST", `${kb("kb-rules")}/pages`, { name: "X" })
      assert.strictEqual(missing.status, 400)
      assert.deepStrictEqual(fieldsOf(missing.body), ["source_query"])
      // A refused page left no mental model behind.
      const listed = yield* ok("GET", `${bankPath("kb-rules")}/mental-models`)
      assert.strictEqual(listed.body.items.length, 1)

      // A legal move still works, and moving down the tree keeps the subtree.
      const moved = yield* ok("PATCH", node(deepest), { parent_id: null })
      assert.isNull(moved.body.parent_id)
      const back = yield* ok("PATCH", node(middle), { parent_id: deepest })
      assert.strictEqual(back.body.parent_id, deepest)

      // The same refusals through the published client's generated functions: a 4xx with `detail`.
      const cycle = yield* run(() =>
        sdk.updateKnowledgeNode({
          client: raw,
          path: { bank_id: "kb-rules", node_id: deepest },
          body: { parent_id: middle }
        })
      )
      assert.strictEqual(cycle.response.status, 400)
      assert.include((cycle.error as any).detail, "parent_id")
      const search = yield* run(() =>
        sdk.searchKnowledgeBase({ client: raw, path: { bank_id: "kb-rules" }, query: { q: "" } })
      )
      assert.strictEqual(search.response.status, 400)
      assert.deepStrictEqual((search.error as any).errors.map((e: any) => [e.field, e.location]), [["q", "query"]])
      const limit = yield* run(() =>
        sdk.searchKnowledgeBase({ client: raw, path: { bank_id: "kb-rules" }, query: { q: "x", limit: 0 } })
      )
      assert.strictEqual(limit.response.status, 400)
      assert.isString((limit.error as any).detail)
    }))

  it.effect("a memory repo versions the tree: a reset restores a deleted subtree, a fork copies it", () =>
    Effect.gen(function*() {
      yield* ok("PUT", bankPath("kb-repo"), {})
      const top = (yield* ok("POST", `${kb("kb-repo")}/folders`, { name: "Top" })).body.id
      const inner = (yield* ok("POST", `${kb("kb-repo")}/folders`, { name: "Inner", parent_id: top })).body.id
      yield* ok("POST", `${kb("kb-repo")}/pages`, { name: "Page", source_query: "What is here?", parent_id: inner })
      const shape = (bank: string) =>
        Effect.map(ok("GET", `${kb(bank)}/tree`), (tree) => {
          const walk = (nodes: ReadonlyArray<any>): Array<unknown> =>
            nodes.map((node) => [node.kind, node.name, node.description, walk(node.children ?? [])])
          return walk(tree.body.roots)
        })
      const before = yield* shape("kb-repo")
      const repo = (yield* ok("POST", `${bankPath("kb-repo")}/repos/enable`, { repo_name: "kb" })).body

      yield* ok("DELETE", `${kb("kb-repo")}/nodes/${top}`)
      assert.deepStrictEqual(yield* shape("kb-repo"), [])
      yield* ok("POST", `/v1/default/repos/${repo.repo_id}/reset-hard`, { commit_id: repo.head_commit_id, force: true })
      assert.deepStrictEqual(yield* shape("kb-repo"), before)

      yield* ok("POST", `/v1/default/repos/${repo.repo_id}/fork-bank`, { target_bank_id: "kb-repo-copy" })
      assert.deepStrictEqual(yield* shape("kb-repo-copy"), before)
      const copied = (yield* ok("GET", `${kb("kb-repo-copy")}/tree`)).body.roots[0]
      assert.notStrictEqual(copied.id, top, "a fork's nodes have their own ids")
      // The copy is its own tree: deleting there leaves the source alone.
      yield* ok("DELETE", `${kb("kb-repo-copy")}/nodes/${copied.id}`)
      assert.deepStrictEqual(yield* shape("kb-repo"), before)
    }))

  it.effect("unknown banks, pages and nodes are 404 with a detail; the tree goes with its bank", () =>
    Effect.gen(function*() {
      const { raw } = yield* clients
      const bank = { bank_id: "kb-nobody" }
      const answers = yield* run(() =>
        Promise.all([
          sdk.getKnowledgeBaseTree({ client: raw, path: bank }),
          sdk.createKnowledgeFolder({ client: raw, path: bank, body: { name: "F" } }),
          sdk.createKnowledgePage({ client: raw, path: bank, body: { name: "P", source_query: "Q?" } }),
          sdk.exportKnowledgeBase({ client: raw, path: bank }),
          sdk.searchKnowledgeBase({ client: raw, path: bank, query: { q: "anything" } }),
          sdk.getKnowledgePage({ client: raw, path: { ...bank, page_id: "p" } }),
          sdk.deleteKnowledgeNode({ client: raw, path: { ...bank, node_id: "n" } }),
          sdk.updateKnowledgeNode({ client: raw, path: { ...bank, node_id: "n" }, body: { name: "N" } })
        ])
      )
      for (const answer of answers) {
        assert.strictEqual(answer.response.status, 404, answer.request.url)
        assert.include((answer.error as any).detail, "kb-nobody")
      }

      yield* ok("PUT", bankPath("kb-gone"), {})
      const folder = (yield* ok("POST", `${kb("kb-gone")}/folders`, { name: "F" })).body.id
      for (const path of [`${kb("kb-gone")}/pages/nope`, `${kb("kb-gone")}/pages/${folder}`]) {
        const missing = yield* call("GET", path)
        assert.strictEqual(missing.status, 404)
        assert.include(missing.body.detail, "knowledge page")
      }
      const node = yield* call("PATCH", `${kb("kb-gone")}/nodes/nope`, { name: "N" })
      assert.strictEqual(node.status, 404)
      assert.include(node.body.detail, "knowledge node 'nope'")

      yield* ok("DELETE", bankPath("kb-gone"))
      yield* ok("PUT", bankPath("kb-gone"), {})
      assert.deepStrictEqual((yield* ok("GET", `${kb("kb-gone")}/tree`)).body, { roots: [] })
      const empty = yield* ok("GET", `${kb("kb-gone")}/export`)
      assert.deepStrictEqual(empty.body.files.map((file: any) => file.path), ["index.md"])
    }))
})
