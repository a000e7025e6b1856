/**
 * The graph evidence view and the timeline over HTTP: nodes are the bank's memories, edges exactly the links
 * retain stored between them, filters by type, text and tags (strict "all" by default), limits, time order,
 * and the errors a client sees.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = "graph-a"
const base = `/v1/default/banks/${bank}`

const items = [
  {
    content: "Alice joined Acme Corp in Berlin as a search engineer.",
    tags: ["team-a"],
    timestamp: "2024-01-10T09:00:00Z"
  },
  { content: "The weather in Berlin was cold and grey that week.", timestamp: "2024-01-11T09:00:00Z" },
  {
    content: "Alice and Bob shipped the Acme search feature together.",
    tags: ["team-a", "team-b"],
    timestamp: "2024-02-15T09:00:00Z"
  },
  {
    content: "Bob moved to Lisbon to open the Acme office there.",
    tags: ["team-b"],
    timestamp: "2024-03-20T09:00:00Z"
  },
  { content: "Carol keeps a garden of rare orchids.", tags: ["team-c"], timestamp: "unset" }
]

type Edge = { from: string; to: string; type: string; weight: number }
const key = (edge: Edge) => `${edge.from}|${edge.to}|${edge.type}|${edge.weight.toFixed(4)}`

const storedLinks = (ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ fromId: string; toId: string; linkType: string; weight: number }>`
      SELECT from_id, to_id, link_type, weight FROM memory_links WHERE bank_id = ${bank}`
    const set = new Set(ids)
    return rows
      .filter((row) => set.has(row.fromId) && set.has(row.toId))
      .map((row) => key({ from: row.fromId, to: row.toId, type: row.linkType, weight: row.weight }))
      .sort()
  })

const get = (path: string) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("GET", `${base}${path}`)
  })

/** The bank every graph test reads, retained once before the first test (each test can run alone). */
const graphBank = Layer.effectDiscard(Effect.gen(function*() {
  const server = yield* TestServer
  // No consolidation: observations appearing in the background would change the bank between assertions.
  yield* server.request("PUT", base, { json: { enable_observations: false } })
  const retained = yield* server.request("POST", `${base}/memories`, { json: { items } })
  if (retained.status !== 200) return yield* Effect.die(new Error(`retaining the graph bank: ${retained.text}`))
}))

layer(Layer.provideMerge(graphBank, testApp()), { excludeTestServices: true })("graph", (it) => {
  it.effect("GET graph returns every memory as a node and exactly the stored links among them", () =>
    Effect.gen(function*() {
      const graph = yield* get("/graph")
      assert.strictEqual(graph.status, 200, graph.text)
      const all = yield* get("/memories/list?limit=1000")
      assert.strictEqual(graph.body.total_units, all.body.total)
      assert.strictEqual(graph.body.limit, 1000)
      const ids = graph.body.nodes.map((node: any) => node.id)
      assert.deepStrictEqual([...ids].sort(), all.body.items.map((item: any) => item.id).sort())
      assert.isAbove(graph.body.edges.length, 0)
      assert.deepStrictEqual(graph.body.edges.map(key).sort(), yield* storedLinks(ids))
      for (const edge of graph.body.edges) {
        assert.include(["semantic", "temporal", "entity", "causes", "caused_by", "enables", "prevents"], edge.type)
      }
      const alice = graph.body.nodes.find((node: any) => node.text.startsWith("Alice joined"))
      assert.include(alice.entities, "Alice")
      assert.deepStrictEqual(alice.tags, ["team-a"])
      assert.strictEqual(alice.type, "world")
      assert.strictEqual(alice.access_count, 0)
      assert.strictEqual(alice.mentioned_at, "2024-01-10T09:00:00.000Z")
      assert.strictEqual(graph.body.table_rows.length, graph.body.nodes.length)
      const row = graph.body.table_rows.find((r: any) => r.id === alice.id)
      assert.include(row.entities, "Alice")
      assert.strictEqual(row.text, alice.text)
    }))

  it.effect("limit keeps the newest memories and only the links between them", () =>
    Effect.gen(function*() {
      const graph = yield* get("/graph?limit=2")
      assert.strictEqual(graph.body.nodes.length, 2)
      assert.strictEqual(graph.body.limit, 2)
      assert.strictEqual(graph.body.total_units, (yield* get("/graph")).body.total_units)
      const ids = graph.body.nodes.map((node: any) => node.id)
      assert.deepStrictEqual(graph.body.edges.map(key).sort(), yield* storedLinks(ids))
      assert.isTrue(graph.body.nodes.some((node: any) => node.text.startsWith("Bob moved")))
    }))

  it.effect("type, q and tags filter the nodes; tags match all_strict unless told otherwise", () =>
    Effect.gen(function*() {
      const world = yield* get("/graph?type=world")
      assert.isTrue(world.body.nodes.every((node: any) => node.type === "world"))
      const observations = yield* get("/graph?type=observation")
      assert.strictEqual(observations.body.total_units, 0)

      const lisbon = yield* get("/graph?q=lisbon")
      assert.isAbove(lisbon.body.nodes.length, 0)
      assert.isTrue(lisbon.body.nodes.every((node: any) => node.text.toLowerCase().includes("lisbon")))

      const teamA = yield* get("/graph?tags=team-a")
      assert.isAbove(teamA.body.nodes.length, 0)
      assert.isTrue(teamA.body.nodes.every((node: any) => node.tags.includes("team-a")))
      const both = yield* get("/graph?tags=team-a&tags=team-b")
      assert.isAbove(both.body.nodes.length, 0)
      assert.isTrue(both.body.nodes.every((node: any) => node.tags.includes("team-a") && node.tags.includes("team-b")))
      assert.isBelow(both.body.total_units, teamA.body.total_units)
      const anyTag = yield* get("/graph?tags=team-a&tags_match=any")
      assert.isTrue(anyTag.body.nodes.some((node: any) => node.tags.length === 0))
      assert.deepStrictEqual(
        anyTag.body.edges.map(key).sort(),
        yield* storedLinks(anyTag.body.nodes.map((node: any) => node.id))
      )
    }))

  it.effect("GET timeline lists memories with a time, oldest first, with their links", () =>
    Effect.gen(function*() {
      const timeline = yield* get("/timeline")
      assert.strictEqual(timeline.status, 200, timeline.text)
      assert.strictEqual(timeline.body.limit, 500)
      assert.strictEqual(timeline.body.total_items, timeline.body.items.length)
      const dates = timeline.body.items.map((item: any) => item.occurred_start ?? item.mentioned_at)
      assert.isTrue(dates.every((date: string | null) => date !== null))
      assert.deepStrictEqual(dates, [...dates].sort())
      assert.isFalse(timeline.body.items.some((item: any) => item.text.includes("orchids")))
      const ids = timeline.body.items.map((item: any) => item.id)
      assert.deepStrictEqual(timeline.body.edges.map(key).sort(), yield* storedLinks(ids))
      assert.isTrue(timeline.body.edges.some((edge: Edge) => edge.type === "temporal"))

      const latest = yield* get("/timeline?limit=1")
      assert.strictEqual(latest.body.items.length, 1)
      assert.include(latest.body.items[0].text, "Lisbon")
      assert.strictEqual(latest.body.total_items, timeline.body.total_items)
      const teamB = yield* get("/timeline?tags=team-b")
      assert.isTrue(teamB.body.items.every((item: any) => item.tags.includes("team-b")))
    }))

  it.effect("graph/summary clusters the state surface (entities and topics) and the evidence surface (memories)", () =>
    Effect.gen(function*() {
      // These memories are from 2024: the state surface reads them with the window and the threshold opened.
      const open = "window_days=0&confidence_min=0"
      const state = yield* get(`/graph/summary?${open}`)
      assert.strictEqual(state.status, 200, state.text)
      assert.strictEqual(state.body.surface, "state")
      assert.strictEqual(state.body.mode_hint, "detail")
      assert.isFalse(state.body.cached)
      const intelligence = (yield* get(`/graph/intelligence?${open}&limit=100`)).body
      assert.strictEqual(state.body.total_nodes, intelligence.total_nodes)
      assert.strictEqual(
        state.body.clusters.reduce((sum: number, cluster: any) => sum + cluster.member_count, 0),
        intelligence.total_nodes
      )
      const ids = new Set(intelligence.nodes.map((node: any) => node.id))
      for (const node of state.body.top_nodes) {
        assert.isTrue(ids.has(node.node_ref), node.node_ref)
        assert.strictEqual(node.kind, "node")
        assert.include(state.body.clusters.map((cluster: any) => cluster.id), node.cluster_membership)
      }
      assert.deepStrictEqual(state.body.initial_focus_ids, state.body.top_nodes.slice(0, 3).map((n: any) => n.id))
      const priorities = state.body.top_nodes.map((node: any) => node.display_priority)
      assert.deepStrictEqual(priorities, [...priorities].sort((a: number, b: number) => b - a))
      assert.include(state.body.top_nodes.map((node: any) => node.title), "Alice")
      // The default window is the last 90 days of the memories' own time: only Carol's undated memory (stored now).
      assert.deepStrictEqual((yield* get("/graph/summary")).body.top_nodes.map((node: any) => node.title), ["Carol"])

      const topics = yield* get(`/graph/summary?node_kind=topic&${open}`)
      assert.isTrue(topics.body.top_nodes.every((node: any) => node.node_ref.startsWith("topic:")))
      // team-a and team-b tag two memories each; team-c only one, which makes no topic.
      assert.strictEqual(topics.body.total_nodes, 2)
      const entities = yield* get(`/graph/summary?node_kind=entity&${open}`)
      assert.isTrue(entities.body.top_nodes.every((node: any) => node.node_ref.startsWith("entity:")))

      const evidence = yield* get("/graph/summary?surface=evidence&confidence_min=0")
      assert.strictEqual(evidence.body.surface, "evidence")
      assert.strictEqual(evidence.body.total_nodes, (yield* get("/graph")).body.total_units)
      assert.strictEqual(
        evidence.body.total_edges,
        (yield* storedLinks((yield* get("/graph")).body.nodes.map((n: any) => n.id))).length
      )
      const clusterIds = evidence.body.clusters.map((cluster: any) => cluster.id)
      for (const bundle of evidence.body.bundled_edges) {
        assert.include(clusterIds, bundle.source_id)
        assert.include(clusterIds, bundle.target_id)
        assert.isAbove(bundle.weight, 0)
      }
    }))

  it.effect("graph/neighborhood expands focus nodes along their links, bounded", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const alice = (yield* get("/graph?q=Alice%20joined")).body.nodes[0].id
      const neighbours = yield* sql<{ id: string }>`
        SELECT to_id AS id FROM memory_links WHERE from_id = ${alice}
        UNION SELECT from_id FROM memory_links WHERE to_id = ${alice}`
      const around = yield* get(`/graph/neighborhood?surface=evidence&confidence_min=0&focus_ids=${alice}`)
      assert.strictEqual(around.status, 200, around.text)
      assert.deepStrictEqual(around.body.focus_ids, [alice])
      assert.strictEqual(around.body.nodes[0].node_ref, alice)
      assert.strictEqual(around.body.nodes[0].depth, 0)
      assert.deepStrictEqual(
        around.body.nodes.filter((node: any) => node.depth === 1).map((node: any) => node.id).sort(),
        neighbours.map((row) => row.id).sort()
      )
      const returned = new Set(around.body.nodes.map((node: any) => node.id))
      for (const edge of around.body.edges) {
        assert.isTrue(returned.has(edge.source_id) && returned.has(edge.target_id))
        assert.isAtLeast(edge.strength, 0)
        assert.isAtMost(edge.strength, 1)
      }
      assert.isFalse(around.body.has_more)
      assert.isNull(around.body.cursor)

      const bounded = yield* get(
        `/graph/neighborhood?surface=evidence&confidence_min=0&focus_ids=${alice}&limit_nodes=2&limit_edges=1`
      )
      assert.strictEqual(bounded.body.nodes.length, 2)
      assert.isAtMost(bounded.body.edges.length, 1)
      assert.isTrue(bounded.body.has_more)

      const open = "window_days=0&confidence_min=0"
      const entity = (yield* get(`/graph/summary?node_kind=entity&${open}`)).body.top_nodes[0].node_ref
      const name = (yield* get(`/graph/intelligence?node_kind=entity&${open}&limit=100`)).body.nodes
        .find((node: any) => node.id === entity).title
      const coMentioned = yield* sql<{ name: string }>`
        SELECT DISTINCT eb.canonical_name AS name FROM unit_entities a
        JOIN entities ea ON ea.id = a.entity_id JOIN unit_entities b ON b.unit_id = a.unit_id
        JOIN entities eb ON eb.id = b.entity_id
        JOIN memory_units u ON u.id = a.unit_id
        WHERE u.bank_id = ${bank} AND ea.canonical_name = ${name} AND eb.id <> ea.id`
      const state = yield* get(`/graph/neighborhood?node_kind=entity&${open}&focus_ids=${entity}&depth=1`)
      assert.deepStrictEqual(
        state.body.nodes
          .filter((node: any) => node.depth === 1 && !node.id.startsWith("event:"))
          .map((node: any) => node.id).sort(),
        coMentioned.map((row) => `entity:${row.name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`).sort()
      )
      assert.isTrue(state.body.edges.every((edge: any) =>
        ["co_occurs", "change", "contradiction", "stale"].includes(edge.relation_type) && edge.evidence_count >= 1
      ))

      const unknown = yield* get("/graph/neighborhood?focus_ids=no-such-node")
      assert.strictEqual(unknown.status, 404)
      const defaultFocus = yield* get(`/graph/neighborhood?${open}`)
      assert.deepStrictEqual(defaultFocus.body.focus_ids.length, 3)
    }))

  it.effect("the overview's window counts memories stored in the last window_days (0 = all)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const all = (yield* get("/graph/summary?surface=evidence")).body.total_nodes
      yield* sql`UPDATE memory_units SET created_at = now() - interval '200 days'
        WHERE bank_id = ${bank} AND text LIKE '%weather%'`
      const recent = (yield* get("/graph/summary?surface=evidence")).body.total_nodes
      const everything = (yield* get("/graph/summary?surface=evidence&window_days=0")).body.total_nodes
      const year = (yield* get("/graph/summary?surface=evidence&window_days=365")).body.total_nodes
      yield* sql`UPDATE memory_units SET created_at = now() WHERE bank_id = ${bank} AND text LIKE '%weather%'`
      assert.isBelow(recent, all)
      assert.strictEqual(everything, all)
      assert.strictEqual(year, all)
    }))

  it.effect("unknown banks answer 404 and bad parameters 400 naming the field", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const missing = yield* server.request("GET", "/v1/default/banks/no-graph-here/graph")
      assert.strictEqual(missing.status, 404)
      assert.include(missing.body.detail, "no-graph-here")
      assert.strictEqual((yield* server.request("GET", "/v1/default/banks/no-graph-here/timeline")).status, 404)
      assert.strictEqual((yield* server.request("GET", "/v1/default/banks/no-graph-here/graph/summary")).status, 404)
      assert.strictEqual(
        (yield* server.request("GET", "/v1/default/banks/no-graph-here/graph/neighborhood")).status,
        404
      )
      for (
        const [path, field] of [
          ["/graph?limit=0", "limit"],
          ["/graph?type=gossip", "type"],
          ["/timeline?tags_match=some", "tags_match"],
          ["/graph/summary?surface=both", "surface"],
          ["/graph/summary?confidence_min=1.5", "confidence_min"],
          ["/graph/summary?node_kind=person", "node_kind"],
          ["/graph/neighborhood?depth=4", "depth"],
          ["/graph/neighborhood?limit_nodes=121", "limit_nodes"],
          ["/graph/neighborhood?limit_edges=301", "limit_edges"]
        ]
      ) {
        const bad = yield* get(path!)
        assert.strictEqual(bad.status, 400, path)
        assert.deepStrictEqual(bad.body.errors.map((e: any) => e.field), [field])
      }
    }))
})
