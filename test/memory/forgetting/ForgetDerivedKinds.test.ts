/**
 * The derived kinds `Forget.test.ts` does not reach, over the real HTTP server on both tiers: after forgetting an
 * entity, its trajectory (computed before) answers 404, the entity map (computed before, naming it) no longer names
 * it (dropped, and recomputed without it), and the graph views (summary, timeline, graph intelligence) and the
 * bank's template export do not return its name; the MCP entity tools answer the same. The other entity stays.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { bankPath, call, ok, operationFinished, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "forget-kinds"
const base = bankPath(bank)
const name = "Octavia Lindqvist"
const about = [
  "Octavia Lindqvist studies chemistry at Uppsala University.",
  "Octavia Lindqvist passed her chemistry exams at Uppsala University.",
  "Octavia Lindqvist joined Borealis Labs as a research chemist.",
  "Octavia Lindqvist leads the polymer team at Borealis Labs."
]
const others = [
  "Bertil Sandgren repairs fishing boats in Gothenburg.",
  "Bertil Sandgren sells smoked herring at the Gothenburg market."
]

const views = [
  "graph/summary",
  "timeline",
  "graph/intelligence",
  "graph/intelligence?node_kind=entity&window_days=0",
  "entities?limit=1000",
  "export"
]

layer(testApp({ mcpToolFamilies: ["entities"] }), { excludeTestServices: true, timeout: "4 minutes" })(
  "forget: the other derived kinds",
  (it) => {
    it.effect(
      "trajectory, entity map, graph views, template export and MCP entity tools lose the entity",
      () =>
        Effect.gen(function*() {
          yield* ok("POST", `${base}/memories`, {
            items: [
              ...about.map((content) => ({ content, entities: [{ text: name }] })),
              ...others.map((content) => ({ content, entities: [{ text: "Bertil Sandgren" }] }))
            ]
          })
          yield* settled(bank)
          const entities = (yield* ok("GET", `${base}/entities?limit=100`)).body.items as Array<any>
          const octavia = entities.find((entity) => entity.canonical_name === name)
          assert.isDefined(octavia, JSON.stringify(entities))
          const trajectory = yield* ok("POST", `${base}/entities/${octavia.id}/trajectory/recompute`)
          yield* operationFinished(bank, trajectory.body.operation_id)
          assert.strictEqual((yield* call("GET", `${base}/entities/${octavia.id}/trajectory`)).status, 200)
          const map = yield* ok("POST", `${base}/entity-intelligence/recompute`)
          yield* operationFinished(bank, map.body.operation_id)
          const mapBefore = yield* ok("GET", `${base}/entity-intelligence`)
          assert.include(mapBefore.text, "Octavia", "the entity map names the entity before the forget")
          const before: Array<string> = []
          for (const view of views) before.push((yield* ok("GET", `${base}/${view}`)).text)
          assert.include(before.join("\n"), "Octavia", "the views show the entity before the forget")

          const report = (yield* ok("POST", `${base}/forget`, { entity: name })).body
          assert.isAtLeast(report.removed.memories, about.length)
          assert.strictEqual(report.removed.trajectories, 1)
          assert.strictEqual(report.removed.entity_intelligence, 1)
          yield* settled(bank)

          assert.strictEqual((yield* call("GET", `${base}/entities/${octavia.id}/trajectory`)).status, 404)
          const mapAfter = yield* call("GET", `${base}/entity-intelligence`)
          assert.notInclude(mapAfter.text, "Octavia")
          for (const view of views) {
            const text = (yield* ok("GET", `${base}/${view}`)).text
            assert.notInclude(text, "Octavia", view)
            assert.notInclude(text, "Uppsala", view)
          }
          assert.include((yield* ok("GET", `${base}/entities?limit=1000`)).text, "Bertil Sandgren")

          const server = yield* TestServer
          const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
          assert.include(yield* mcp.fails("get_entity_trajectory", { entity_id: octavia.id }), "not found")
          // The map named it, so it was dropped; it is recomputed on request, without the entity.
          assert.include(yield* mcp.fails("get_entity_intelligence", {}), "not computed")
          const again = yield* ok("POST", `${base}/entity-intelligence/recompute`)
          yield* operationFinished(bank, again.body.operation_id)
          const recomputed = yield* ok("GET", `${base}/entity-intelligence`)
          assert.include(recomputed.text, "Bertil")
          assert.notInclude(recomputed.text, "Octavia")
        }),
      240_000
    )
  }
)
