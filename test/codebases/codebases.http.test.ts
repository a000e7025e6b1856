/**
 * Codebases over HTTP: hostile archives refused with 400 and nothing stored; a small multi-language repository
 * imported as a durable operation and parsed with tree-sitter into files, symbols, edges and chunks; chunk
 * filters and paging; routing, approval in `direct` and `retain` mode (recallable with `path:line` provenance,
 * re-approval pruning what left memory); single-file import with a diff on re-import; triage settings.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { randomBytes } from "node:crypto"
import { defaultCodebaseSettings } from "../../src/codebases/CodebaseSettings.ts"
import { codebasesPath, settled, upload } from "../support/CodebaseClient.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { makeZip } from "../support/ZipWriter.ts"

const limits = {
  maxFiles: 40,
  maxFileBytes: 2 * 1024 * 1024,
  maxTotalBytes: 3 * 1024 * 1024,
  maxRatio: 100,
  maxInflation: 20,
  inflationFloorBytes: 64 * 1024 * 1024
}
const app = testApp({ codebases: { ...defaultCodebaseSettings, archive: limits, parseWorkers: 1 } })

const sources = {
  "shop/auth.ts": `import { hashPassword } from "./crypto.ts"
/** Checks a user's password and opens a session. */
export function login(user: string, password: string) {
  if (!user || !password) return null
  return { session: hashPassword(password) }
}
export class SessionStore {
  open(id: string) { return login(id, "x") }
  close(id: string) { if (id) { return true } else { return false } }
}
`,
  "shop/crypto.ts": `import { createHash } from "node:crypto"
export const hashPassword = (password: string) => createHash("sha256").update(password).digest("hex")
`,
  "shop/cart.py": `from .pricing import total
class Cart:
    """A shopping cart."""
    def add(self, item):
        if item and item.price > 0:
            self.items.append(item)
    def checkout(self):
        return total(self.items)
`,
  "shop/pricing.py": `def total(items):
    return sum(i.price for i in items)
`,
  "shop/server.go": `package shop
import "fmt"
type Server struct{}
func (s *Server) Run() { fmt.Println("run"); helper() }
func helper() {}
`,
  "README.md": "# Shop\n\nA tiny shop used by tests.\n",
  "logo.png": new Uint8Array([137, 80, 78, 71, 0, 0, 0, 0])
}

const repoZip = (overrides: Record<string, string | Uint8Array | null> = {}) =>
  makeZip(
    Object.entries({ ...sources, ...overrides }).filter(([, data]) => data !== null)
      .map(([name, data]) => ({ name: `shop-main/${name}`, data: data! }))
  )

layer(app, { excludeTestServices: true })("codebases over HTTP", (it) => {
  it.effect("refuses hostile archives with 400 and stores nothing", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-hostile"
      const zip = (path: string) => `${codebasesPath(bankId)}/import/zip`.replace("/import/zip", path)
      const cases: Array<[string, Uint8Array, string]> = [
        ["zip slip", makeZip([{ name: "ok.ts", data: "x" }, { name: "../../evil.ts", data: "x" }]), "path_traversal"],
        ["absolute path", makeZip([{ name: "/etc/passwd", data: "x" }]), "absolute_path"],
        ["symlink", makeZip([{ name: "link", data: "/etc/passwd", mode: 0o120777 }]), "symlink"],
        ["encrypted entry", makeZip([{ name: "secret.ts", data: "x", encrypted: true }]), "encrypted"],
        [
          "too many files",
          makeZip(Array.from({ length: 41 }, (_, i) => ({ name: `f${i}.ts`, data: "x" }))),
          "too_many_files"
        ],
        ["oversized file", makeZip([{ name: "big.ts", data: "a".repeat(2 * 1024 * 1024 + 10) }]), "file_too_large"],
        ["zip bomb (ratio)", makeZip([{ name: "bomb.txt", data: new Uint8Array(1_500_000) }]), "compression_ratio"],
        // Text that barely compresses, so that no entry trips the ratio and only the total cap is crossed.
        [
          "zip bomb (total)",
          makeZip(
            Array.from(
              { length: 8 },
              (_, i) => ({ name: `part${i}.txt`, data: randomBytes(340_000).toString("base64") })
            )
          ),
          "archive_too_large"
        ],
        [
          "lying header",
          makeZip([{ name: "liar.ts", data: "b".repeat(3 * 1024 * 1024), declaredSize: 10 }]),
          "size_mismatch"
        ],
        ["not a zip", new TextEncoder().encode("plain text, not an archive"), "not_a_zip"]
      ]
      for (const [label, bytes, reason] of cases) {
        const response = yield* upload(server, zip("/import/zip"), "archive", "x.zip", bytes, {
          name: `evil-${reason}`
        })
        assert.strictEqual(response.status, 400, `${label}: ${response.text}`)
        assert.include(response.body.detail, reason, label)
      }
      const listed = yield* server.request("GET", codebasesPath(bankId))
      assert.strictEqual(listed.status, 200)
      assert.deepStrictEqual(listed.body.items, [])
      const operations = yield* server.request("GET", `/v1/default/banks/${bankId}/operations`)
      assert.strictEqual((operations.body?.operations ?? operations.body?.items ?? []).length, 0)
    }))

  it.effect("hostile globs: past the limits a 400 naming the field, within them matched without stalling the service", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-globs"
      const path = `${codebasesPath(bankId)}/import/zip`
      const archive = makeZip([{ name: `${"a".repeat(60)}.ts`, data: "export const a = 1" }, {
        name: "b.ts",
        data: "export const b = 2"
      }])
      const refused: ReadonlyArray<readonly [string, unknown]> = [
        ["22 wildcards", { include_globs: ["*a".repeat(21) + "*b"] }],
        ["a long glob", { include_globs: ["x".repeat(200)] }],
        ["too many globs", { exclude_globs: Array.from({ length: 40 }, (_, i) => `*${i}*`) }]
      ]
      for (const [label, globs] of refused) {
        const response = yield* upload(server, path, "archive", "g.zip", archive, {
          name: `globs-${label}`,
          ...(globs as object)
        })
        assert.strictEqual(response.status, 400, `${label}: ${response.text}`)
        assert.match(response.text, /globs/, label)
        // Named under the form's request field, as file retain names its fields.
        assert.match(response.body.errors[0].field, /^request\.(include|exclude)_globs/, label)
      }
      // Sixteen wildcards (the limit) that a backtracking engine takes minutes over: matched at once, health answers.
      const health = yield* server.request("GET", "/health").pipe(Effect.forkChild)
      const hostile = yield* upload(server, path, "archive", "g.zip", archive, {
        name: "globs-hostile",
        include_globs: ["*a".repeat(15) + "*b", "b.ts"]
      })
      assert.strictEqual(hostile.status, 200, hostile.text)
      assert.strictEqual((yield* Fiber.join(health)).status, 200)
    }))

  it.effect("imports a repository, parses it and serves files, symbols, chunks, impact and artifacts", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-shop"
      const base = codebasesPath(bankId)
      const imported = yield* upload(server, `${base}/import/zip`, "archive", "shop.zip", repoZip(), { name: "shop" })
      assert.strictEqual(imported.status, 200, imported.text)
      assert.strictEqual(imported.body.status, "pending")
      const codebaseId = imported.body.codebase_id
      const operation = yield* settled(server, bankId, imported.body.operation_id)
      assert.strictEqual(operation.status, "completed", JSON.stringify(operation))

      const codebase = (yield* server.request("GET", `${base}/${codebaseId}`)).body
      assert.strictEqual(codebase.snapshot_status, "review_required")
      assert.strictEqual(codebase.approval_status, "pending_approval")
      assert.strictEqual(codebase.memory_status, "not_hydrated")
      assert.strictEqual(codebase.current_snapshot_id, imported.body.snapshot_id)
      assert.strictEqual(codebase.stats.indexed_files, 5)
      assert.strictEqual(codebase.stats.excluded_files, 1)
      assert.isAbove(codebase.cluster_count, 0)
      assert.strictEqual(codebase.parse_coverage, 1)

      // The single top folder is stripped; the binary is excluded; markdown is retained as regions.
      const files = (yield* server.request("GET", `${base}/${codebaseId}/files`)).body
      const byPath = new Map(files.items.map((file: any) => [file.path, file]))
      assert.strictEqual((byPath.get("shop/auth.ts") as any).status, "indexed")
      assert.strictEqual((byPath.get("logo.png") as any).status, "excluded")
      assert.strictEqual((byPath.get("README.md") as any).status, "retained")
      const typescriptOnly = (yield* server.request("GET", `${base}/${codebaseId}/files?language=python`)).body
      assert.deepStrictEqual(typescriptOnly.items.map((file: any) => file.path), ["shop/cart.py", "shop/pricing.py"])

      const login = (yield* server.request("GET", `${base}/${codebaseId}/symbols?q=login`)).body.items
      assert.strictEqual(login[0].match, "exact")
      assert.strictEqual(login[0].kind, "function")
      assert.strictEqual(login[0].exported, true)
      assert.isAbove(login[0].chunk_ids.length, 0)
      const methods = (yield* server.request("GET", `${base}/${codebaseId}/symbols?q=Cart&kind=method`)).body.items
      assert.includeMembers(methods.map((symbol: any) => symbol.fq_name), ["Cart.add", "Cart.checkout"])
      const goMethod = (yield* server.request("GET", `${base}/${codebaseId}/symbols?q=Run&language=go`)).body.items
      assert.strictEqual(goMethod[0].fq_name, "Server.Run")
      const empty = yield* server.request("GET", `${base}/${codebaseId}/symbols?q=`)
      assert.strictEqual(empty.status, 400)

      // Impact: crypto.ts is imported by auth.ts; pricing.py by cart.py.
      const impact =
        (yield* server.request("POST", `${base}/${codebaseId}/impact`, { json: { path: "shop/crypto.ts" } })).body
      assert.deepStrictEqual(impact.impacted_files.map((file: any) => [file.path, file.depth]), [
        ["shop/crypto.ts", 0],
        ["shop/auth.ts", 1]
      ])
      assert.include(impact.explanation, "path 'shop/crypto.ts'")
      const bySymbol =
        (yield* server.request("POST", `${base}/${codebaseId}/impact`, { json: { symbol: "total" } })).body
      assert.includeMembers(bySymbol.impacted_files.map((file: any) => file.path), ["shop/pricing.py", "shop/cart.py"])
      const twoSeeds = yield* server.request("POST", `${base}/${codebaseId}/impact`, {
        json: { path: "a", symbol: "b" }
      })
      assert.strictEqual(twoSeeds.status, 400)
      const noSeed = yield* server.request("POST", `${base}/${codebaseId}/impact`, { json: {} })
      assert.strictEqual(noSeed.status, 400)

      // Chunks: filters, order and cursor paging.
      const all = (yield* server.request("GET", `${base}/${codebaseId}/chunks?limit=100&order_by=path`)).body
      assert.isFalse(all.has_more)
      const review = (yield* server.request("GET", `${base}/${codebaseId}/review`)).body
      const counts = review.review_counts
      assert.strictEqual(counts.unrouted + counts.memory + counts.research + counts.dismissed, all.items.length)
      const paths = all.items.map((chunk: any) => `${chunk.path}:${String(chunk.start_line).padStart(4, "0")}`)
      assert.deepStrictEqual(paths, [...paths].sort())
      // Scores read back as written (4 places), not with the float4 noise of their columns.
      for (const chunk of all.items) {
        for (
          const score of [
            chunk.significance_score,
            chunk.pagerank_centrality,
            chunk.parse_confidence,
            chunk.significance_components.score
          ]
        ) {
          assert.strictEqual(score, Number(score.toFixed(4)), `${chunk.path}:${chunk.start_line}`)
        }
      }
      const page1 = (yield* server.request("GET", `${base}/${codebaseId}/chunks?limit=3&order_by=path`)).body
      assert.isTrue(page1.has_more)
      const page2 =
        (yield* server.request("GET", `${base}/${codebaseId}/chunks?limit=3&order_by=path&cursor=${page1.next_cursor}`))
          .body
      assert.deepStrictEqual(
        [...page1.items, ...page2.items].map((chunk: any) => chunk.id),
        all.items.slice(0, 6).map((chunk: any) => chunk.id)
      )
      const safety =
        (yield* server.request("GET", `${base}/${codebaseId}/chunks?has_safety_tag=true&limit=100`)).body.items
      assert.isTrue(safety.length > 0 && safety.every((chunk: any) => chunk.safety_tags.length > 0))
      assert.isTrue(safety.some((chunk: any) => chunk.label === "login" && chunk.safety_tags.includes("auth")))
      const python =
        (yield* server.request("GET", `${base}/${codebaseId}/chunks?language=python&kind=method&limit=100`)).body.items
      assert.deepStrictEqual(python.map((chunk: any) => chunk.label).sort(), ["Cart.add", "Cart.checkout"])
      const ranged =
        (yield* server.request("GET", `${base}/${codebaseId}/chunks?min_significance=0.5&limit=100`)).body.items
      assert.isTrue(ranged.every((chunk: any) => chunk.significance_score >= 0.5))
      const bad = yield* server.request("GET", `${base}/${codebaseId}/chunks?cursor=nonsense`)
      assert.strictEqual(bad.status, 400)

      const close = all.items.find((chunk: any) => chunk.label === "SessionStore.close")
      assert.strictEqual(close.complexity_score, 2)
      const detail = (yield* server.request("GET", `${base}/${codebaseId}/chunks/${close.id}`)).body
      assert.isTrue(detail.content_text.startsWith("# shop/auth.ts  lines 9-9\n"))
      assert.isAbove(detail.related_chunks.length, 0)
      assert.strictEqual(detail.related_chunks.length, close.related_count)
      assert.isTrue(
        detail.impact_edges.some((edge: any) => edge.edge_type === "imports" && edge.to_path === "shop/crypto.ts")
      )

      // Artifacts and curate.
      const map = (yield* server.request("GET", `${base}/${codebaseId}/artifacts/repo-map`)).body
      assert.isAbove(map.repo_map.top_symbols.length, 3)
      assert.strictEqual(map.repo_map.summary.total_files, 7)
      const modules = (yield* server.request("GET", `${base}/${codebaseId}/artifacts/modules`)).body.items
      assert.isTrue(modules.some((module: any) => module.module === "shop"))
      const cards = (yield* server.request("GET", `${base}/${codebaseId}/artifacts/symbols?limit=2`)).body
      assert.strictEqual(cards.items.length, 2)
      assert.isTrue(cards.has_more)
      const card = (yield* server.request("GET", `${base}/${codebaseId}/artifacts/symbols/login`)).body.symbol_card
      assert.strictEqual(card.purpose, "Checks a user's password and opens a session.")
      assert.include(card.top_callees, "hashPassword")
      assert.include(card.top_callers, "SessionStore.open")
      const curated = (yield* server.request("POST", `${base}/${codebaseId}/curate`, {
        json: { intent: "how does password login work" }
      })).body
      assert.isAbove(curated.clusters.length, 0)
      const top = curated.clusters[0].chunks.map((chunk: any) => chunk.label)
      assert.include(top, "login", JSON.stringify(curated.clusters[0]))
      assert.include(curated.symbol_cards.slice(0, 3).map((card: any) => card.name), "login")
      assert.isTrue(curated.total_candidates < all.items.length, "chunks without a shared word are not candidates")
    }))

  it.effect("routes, approves directly into recallable memory, and prunes on re-approval", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-approve"
      const base = codebasesPath(bankId)
      const imported = yield* upload(server, `${base}/import/zip`, "archive", "shop.zip", repoZip(), { name: "shop" })
      yield* settled(server, bankId, imported.body.operation_id)
      const codebaseId = imported.body.codebase_id
      const chunks = (yield* server.request("GET", `${base}/${codebaseId}/chunks?limit=100`)).body.items
      const memoryNow = chunks.filter((chunk: any) => chunk.route_target === "memory").map((chunk: any) => chunk.id)
      if (memoryNow.length > 0) {
        yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
          json: { item_ids: memoryNow, target: "unrouted" }
        })
      }
      const refusal = yield* server.request("POST", `${base}/${codebaseId}/approve`, { json: {} })
      assert.strictEqual(refusal.status, 400)
      assert.include(refusal.body.detail, "route at least one chunk to memory")

      const login = chunks.find((chunk: any) => chunk.label === "login")
      const checkout = chunks.find((chunk: any) => chunk.label === "Cart.checkout")
      const routed = yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
        json: { item_ids: [login.id, checkout.id], target: "memory" }
      })
      assert.strictEqual(routed.status, 200, routed.text)
      assert.strictEqual(routed.body.updated_count, 2)
      assert.strictEqual(routed.body.review_counts.memory, 2)
      assert.isNull(routed.body.operation_id)
      const inProgress = (yield* server.request("GET", `${base}/${codebaseId}`)).body
      assert.strictEqual(inProgress.snapshot_status, "review_in_progress")
      const open = chunks.find((chunk: any) => chunk.label === "SessionStore.open")
      yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
        json: { item_ids: [open.id], target: "research" }
      })
      const research = (yield* server.request("GET", `${base}/${codebaseId}/research`)).body
      assert.deepStrictEqual(research.items.map((chunk: any) => [chunk.id, chunk.route_source]), [[open.id, "manual"]])
      const listed = (yield* server.request("GET", base)).body.items
      assert.deepStrictEqual(listed.map((item: any) => [item.id, item.name, item.source_type]), [[
        codebaseId,
        "shop",
        "zip"
      ]])
      assert.strictEqual(listed[0].review_counts.research, 1)
      const unknown = yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
        json: { item_ids: ["nope"], target: "memory" }
      })
      assert.strictEqual(unknown.status, 400)

      const approved = yield* server.request("POST", `${base}/${codebaseId}/approve`, {
        json: { memory_ingest_mode: "direct" }
      })
      assert.strictEqual(approved.status, 200, approved.text)
      const result = yield* settled(server, bankId, approved.body.operation_id)
      assert.strictEqual(result.status, "completed", JSON.stringify(result))
      const after = (yield* server.request("GET", `${base}/${codebaseId}`)).body
      assert.strictEqual(after.snapshot_status, "partially_approved")
      assert.strictEqual(after.memory_status, "hydrated")
      assert.strictEqual(after.approved_snapshot_id, imported.body.snapshot_id)
      const unknownSnapshot = yield* server.request("POST", `${base}/${codebaseId}/approve`, {
        json: { snapshot_id: "nope" }
      })
      assert.strictEqual(unknownSnapshot.status, 404)

      const recalled = (yield* server.request("POST", `/v1/default/banks/${bankId}/memories/recall`, {
        json: { query: "login password session hashPassword" }
      })).body
      const hit = recalled.results.find((memory: any) => String(memory.context ?? "").startsWith("shop/auth.ts:3-6"))
      assert.isDefined(hit, JSON.stringify(recalled.results.map((memory: any) => memory.context)))
      assert.include(hit.text, "# shop/auth.ts  lines 3-6")
      const loginDoc = `codebase:${codebaseId}:chunk:${login.chunk_key}`
      const checkoutDoc = `codebase:${codebaseId}:chunk:${checkout.chunk_key}`
      assert.strictEqual(
        (yield* server.request("GET", `/v1/default/banks/${bankId}/documents/${encodeURIComponent(checkoutDoc)}`))
          .status,
        200
      )

      // Take checkout out of memory and approve in retain mode: its document goes, login's is reused.
      yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
        json: { item_ids: [checkout.id], target: "dismissed" }
      })
      const retained = yield* server.request("POST", `${base}/${codebaseId}/review/route`, {
        json: { item_ids: [login.id], target: "memory", queue_memory_import: true, memory_ingest_mode: "retain" }
      })
      assert.isTrue(retained.body.queued_for_memory)
      const second = yield* settled(server, bankId, retained.body.operation_id)
      assert.strictEqual(second.status, "completed", JSON.stringify(second))
      const secondResult =
        (yield* server.request("GET", `/v1/default/banks/${bankId}/operations/${retained.body.operation_id}/result`))
          .body
      const payload = secondResult.result ?? secondResult.result_payload ?? secondResult
      assert.strictEqual(payload.reused_chunks, 1, JSON.stringify(secondResult))
      assert.strictEqual(payload.deleted_chunks, 1)
      assert.strictEqual(
        (yield* server.request("GET", `/v1/default/banks/${bankId}/documents/${encodeURIComponent(checkoutDoc)}`))
          .status,
        404
      )
      assert.strictEqual(
        (yield* server.request("GET", `/v1/default/banks/${bankId}/documents/${encodeURIComponent(loginDoc)}`)).status,
        200
      )
    }))

  it.effect("imports a single file and diffs a re-import against the previous snapshot", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-file"
      const base = codebasesPath(bankId)
      const empty = yield* upload(server, `${base}/import/file`, "file", "empty.py", "", { name: "one" })
      assert.strictEqual(empty.status, 400)
      const first = yield* upload(server, `${base}/import/file`, "file", "tool.py", "def run():\n    return 1\n", {
        name: "one",
        virtual_path: "pkg/tool.py"
      })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(first.body.filename, "tool.py")
      assert.strictEqual(first.body.virtual_path, "pkg/tool.py")
      assert.strictEqual(first.body.added_files, 1)
      yield* settled(server, bankId, first.body.operation_id)
      const symbols = (yield* server.request("GET", `${base}/${first.body.codebase_id}/symbols?q=run`)).body.items
      assert.strictEqual(symbols[0].path, "pkg/tool.py")
      const duplicate = yield* upload(server, `${base}/import/file`, "file", "tool.py", "x = 1\n", {
        name: "one",
        virtual_path: "pkg/tool.py"
      })
      assert.strictEqual(duplicate.status, 400)
      assert.include(duplicate.body.detail, "refresh_existing")
      const second = yield* upload(server, `${base}/import/file`, "file", "tool.py", "def run():\n    return 2\n", {
        name: "one",
        virtual_path: "pkg/tool.py",
        refresh_existing: true
      })
      assert.strictEqual(second.status, 200, second.text)
      assert.strictEqual(second.body.codebase_id, first.body.codebase_id)
      assert.strictEqual(second.body.changed_files, 1)
      assert.strictEqual(second.body.added_files, 0)
      yield* settled(server, bankId, second.body.operation_id)
      const changed = (yield* server.request("GET", `${base}/${first.body.codebase_id}/files?changed_only=true`)).body
      assert.deepStrictEqual(changed.items.map((file: any) => [file.path, file.change_kind]), [[
        "pkg/tool.py",
        "modified"
      ]])
      const bad = yield* upload(server, `${base}/import/file`, "file", "x.py", "x = 1\n", {
        name: "two",
        virtual_path: "../x.py"
      })
      assert.strictEqual(bad.status, 400)
      const invalid = yield* upload(server, `${base}/import/file`, "file", "x.py", "x = 1\n", "{not json")
      assert.strictEqual(invalid.status, 400)
    }))

  it.effect("reads and replaces triage settings; the next import routes by them", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bankId = "cb-triage"
      const base = codebasesPath(bankId)
      const imported = yield* upload(server, `${base}/import/zip`, "archive", "shop.zip", repoZip(), { name: "shop" })
      yield* settled(server, bankId, imported.body.operation_id)
      const id = imported.body.codebase_id
      const defaults = (yield* server.request("GET", `${base}/${id}/triage-settings`)).body.settings
      assert.deepStrictEqual(defaults, {
        score_threshold_high: 0.62,
        centrality_threshold: 0.35,
        safety_threshold: 0.25,
        embedding_provider: "local_embedding",
        enable_safety_scan: true,
        enable_rulescan: false,
        rulescan_rulepack: null,
        code_index_path: null
      })
      const invalid = yield* server.request("PUT", `${base}/${id}/triage-settings`, {
        json: { score_threshold_high: 2 }
      })
      assert.strictEqual(invalid.status, 400)
      assert.include(invalid.body.detail, "score_threshold_high")
      const replaced = yield* server.request("PUT", `${base}/${id}/triage-settings`, {
        json: { enable_safety_scan: false, safety_threshold: 0.9 }
      })
      assert.strictEqual(replaced.body.settings.safety_threshold, 0.9)
      assert.strictEqual(replaced.body.settings.score_threshold_high, 0.62)
      const reimport = yield* upload(
        server,
        `${base}/import/zip`,
        "archive",
        "shop.zip",
        repoZip({ "shop/extra.ts": "export const x = 1\n" }),
        { name: "shop", refresh_existing: true }
      )
      yield* settled(server, bankId, reimport.body.operation_id)
      const safety = (yield* server.request("GET", `${base}/${id}/chunks?has_safety_tag=true`)).body.items
      assert.strictEqual(safety.length, 0)
      const missing = yield* server.request("GET", `${base}/nope/triage-settings`)
      assert.strictEqual(missing.status, 404)
    }))
})
