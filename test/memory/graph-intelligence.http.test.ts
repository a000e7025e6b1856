/**
 * Graph intelligence over HTTP: crafted facts about Alice ("works at Acme", later "no longer works at Acme") show
 * her node as changed or contradictory with the evidence and a change event; investigate answers "what changed
 * about Alice?" with an evidence path; the state summary and neighbourhood draw the same nodes and events; answers
 * are cached until the bank's next write; bad parameters are 400s naming the field.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { testApp, TestServer } from "../support/TestServer.ts"

const bank = "graph-intel"
const base = `/v1/default/banks/${bank}`
const day = 86_400_000

const request = (method: string, path: string, json?: unknown, bankBase = base) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, `${bankBase}${path}`, json === undefined ? {} : { json })
  })

/** Alice's job changes, Bob and Carol stay put. */
const retainStory = (bankBase: string) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const at = (daysAgo: number) => new Date(now - daysAgo * day).toISOString()
    yield* request("PUT", "", { enable_observations: false }, bankBase)
    const retained = yield* request("POST", "/memories", {
      items: [
        { content: "Alice works at Acme as a search engineer.", tags: ["work"], timestamp: at(30) },
        { content: "Bob lives in Lisbon and works at Globex.", tags: ["work"], timestamp: at(20) },
        { content: "Carol grows orchids in her Berlin garden.", tags: ["home"], timestamp: at(1) },
        { content: "Bob enjoys surfing near Lisbon on weekends.", tags: ["home"], timestamp: at(8) },
        { content: "Alice no longer works at Acme.", tags: ["work"], timestamp: at(2) }
      ]
    }, bankBase)
    if (retained.status !== 200) return yield* Effect.die(new Error(`retaining ${bankBase}: ${retained.text}`))
  })

/** The bank the read-only tests share, retained once before the first (each test can run alone). */
const storyBank = Layer.effectDiscard(retainStory(base))

/** The ids of the memories whose text contains `text`. */
const idsOf = (text: string) =>
  request("GET", `/graph?q=${encodeURIComponent(text)}`).pipe(
    Effect.map((graph) => graph.body.nodes.map((n: any) => n.id) as Array<string>)
  )

layer(Layer.provideMerge(storyBank, testApp()), { excludeTestServices: true })("graph intelligence", (it) => {
  it.effect("intelligence shows Alice changed or contradictory, with the evidence and a change event", () =>
    Effect.gen(function*() {
      const answer = yield* request("GET", "/graph/intelligence")
      assert.strictEqual(answer.status, 200, answer.text)
      const alice = answer.body.nodes.find((node: any) => node.id === "entity:alice")
      assert.isDefined(alice, JSON.stringify(answer.body.nodes.map((n: any) => n.id)))
      assert.include(["changed", "contradictory"], alice.status)
      assert.include(alice.status_reason, "Alice")
      const aliceFacts = [...(yield* idsOf("Alice works")), ...(yield* idsOf("Alice no longer"))]
      assert.strictEqual(aliceFacts.length, 2)
      assert.sameMembers(alice.evidence_ids, aliceFacts)
      assert.include(alice.current_state, "no longer")
      const events = answer.body.change_events.filter((event: any) => event.node_id === "entity:alice")
      assert.isAbove(events.length, 0)
      assert.sameMembers(events[0].evidence_ids, aliceFacts)
      assert.include(events[0].after_state, "no longer")
      assert.include(events[0].before_state, "works at Acme")
      assert.match(events[0].time_window, /^\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}$/)
      // Carol has one fact: nothing moved. The ranking puts moving nodes first.
      const carol = answer.body.nodes.find((node: any) => node.id === "entity:carol")
      assert.strictEqual(carol.status, "stable")
      assert.strictEqual(carol.status_reason, "Carol is currently supported by consistent evidence.")
      const scores = answer.body.nodes.map((node: any) => node.change_score)
      assert.deepStrictEqual(scores, [...scores].sort((a: number, b: number) => b - a))
      assert.isAbove(alice.change_score, carol.change_score)
      assert.include(answer.body.nodes.map((node: any) => node.id), "topic:work")
      const coOccurs = answer.body.edges.find((edge: any) =>
        edge.relation_type === "co_occurs" &&
        [edge.source_id, edge.target_id].sort().join() === "entity:acme,entity:alice"
      )
      assert.strictEqual(coOccurs?.evidence_count, 2)
      assert.isTrue(
        answer.body.edges.some((edge: any) => edge.relation_type === "tagged_with" && edge.target_id === "topic:work")
      )
      assert.strictEqual(answer.body.total_nodes, answer.body.nodes.length)

      const entitiesOnly = yield* request("GET", "/graph/intelligence?node_kind=entity&limit=2")
      assert.strictEqual(entitiesOnly.body.nodes.length, 2)
      assert.isTrue(entitiesOnly.body.nodes.every((node: any) => node.kind === "entity"))
      assert.isAbove(entitiesOnly.body.total_nodes, 2)
    }))

  it.effect("investigate answers what changed about Alice with an evidence path", () =>
    Effect.gen(function*() {
      const answer = yield* request("POST", "/graph/investigate", { query: "what changed about Alice?" })
      assert.strictEqual(answer.status, 200, answer.text)
      assert.strictEqual(answer.body.focal_node_ids[0], "entity:alice")
      assert.include(answer.body.answer, "Alice")
      assert.isTrue(answer.body.change_events.every((event: any) => answer.body.focal_node_ids.includes(event.node_id)))
      assert.strictEqual(answer.body.change_events[0].node_id, "entity:alice")
      const path = answer.body.evidence_path
      assert.deepStrictEqual(path.slice(0, 4).map((step: any) => step.kind), ["node", "event", "memory", "memory"])
      assert.strictEqual(path[0].id, "entity:alice")
      assert.sameMembers(path.slice(2, 4).map((step: any) => step.id), answer.body.change_events[0].evidence_ids)
      assert.isTrue(path.slice(2, 4).some((step: any) => step.label.includes("no longer")))
      assert.isAbove(answer.body.recommended_checks.length, 0)
      assert.isTrue(answer.body.focal_edge_ids.length > 0)
    }))

  it.effect("the state summary and neighbourhood draw the same nodes, statuses and change events", () =>
    Effect.gen(function*() {
      const intelligence = (yield* request("GET", "/graph/intelligence?limit=100")).body
      const summary = yield* request("GET", "/graph/summary")
      assert.strictEqual(summary.status, 200, summary.text)
      assert.strictEqual(summary.body.surface, "state")
      assert.strictEqual(summary.body.mode_hint, "detail")
      assert.strictEqual(summary.body.total_nodes, intelligence.total_nodes)
      assert.deepStrictEqual(
        summary.body.top_nodes.map((node: any) => node.id),
        intelligence.nodes.slice(0, 8).map((node: any) => node.id)
      )
      const alice = summary.body.top_nodes.find((node: any) => node.id === "entity:alice")
      assert.include(["changed", "contradictory"], alice.status_tone)
      assert.strictEqual(alice.cluster_membership, `cluster:state:${alice.status_tone}:entity`)
      assert.strictEqual(
        summary.body.clusters.reduce((sum: number, c: any) => sum + c.member_count, 0),
        summary.body.total_nodes
      )
      assert.isTrue(summary.body.clusters.every((c: any) => c.id.startsWith("cluster:state:")))
      assert.deepStrictEqual(summary.body.initial_focus_ids, summary.body.top_nodes.slice(0, 3).map((n: any) => n.id))

      const around = yield* request("GET", "/graph/neighborhood?focus_ids=entity:alice")
      assert.strictEqual(around.status, 200, around.text)
      assert.deepStrictEqual(around.body.focus_ids, ["entity:alice"])
      assert.strictEqual(around.body.nodes[0].id, "entity:alice")
      const nearby = around.body.nodes.filter((node: any) => node.depth === 1).map((node: any) => node.id)
      assert.include(nearby, "entity:acme")
      assert.isTrue(nearby.some((id: string) => id.startsWith("event:entity:alice:")), JSON.stringify(nearby))
      const shown = new Set(around.body.nodes.map((node: any) => node.id))
      assert.isTrue(around.body.edges.every((edge: any) => shown.has(edge.source_id) && shown.has(edge.target_id)))
      assert.isTrue(around.body.has_more)
      assert.strictEqual(around.body.cursor, "depth:2")

      const bounded = yield* request("GET", "/graph/neighborhood?focus_ids=entity:alice&limit_nodes=1")
      assert.strictEqual(bounded.body.nodes.length, 1)
      assert.isTrue(bounded.body.has_more)
      assert.strictEqual((yield* request("GET", "/graph/neighborhood?focus_ids=entity:nobody")).status, 404)
    }))

  it.effect("answers are cached until the bank's next write", () =>
    Effect.gen(function*() {
      // Its own bank: this test writes, and the shared bank must stay as the other tests read it.
      const own = "/v1/default/banks/graph-intel-cache"
      yield* retainStory(own)
      const get = (path: string) => request("GET", path, undefined, own)
      const first = yield* get("/graph/intelligence?node_kind=entity")
      assert.isFalse(first.body.cached)
      const second = yield* get("/graph/intelligence?node_kind=entity")
      assert.isTrue(second.body.cached)
      assert.deepStrictEqual(second.body.nodes, first.body.nodes)
      assert.strictEqual(second.body.generated_at, first.body.generated_at)
      assert.isFalse((yield* get("/graph/summary?node_kind=entity")).body.cached)
      assert.isTrue((yield* get("/graph/summary?node_kind=entity")).body.cached)

      const retained = yield* request("POST", "/memories", {
        items: [{ content: "Alice joined Initech as a manager." }]
      }, own)
      assert.strictEqual(retained.status, 200, retained.text)
      const after = yield* get("/graph/intelligence?node_kind=entity")
      assert.isFalse(after.body.cached)
      const alice = after.body.nodes.find((node: any) => node.id === "entity:alice")
      assert.strictEqual(alice.evidence_count, 3)
      assert.include(alice.current_state, "Initech")
      assert.isFalse((yield* get("/graph/summary?node_kind=entity")).body.cached)
    }))

  it.effect("bad parameters answer 400 naming the field, unknown banks 404", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      for (
        const [method, path, body, field] of [
          ["GET", "/graph/neighborhood?depth=4", undefined, "depth"],
          ["GET", "/graph/neighborhood?limit_nodes=500", undefined, "limit_nodes"],
          ["GET", "/graph/intelligence?confidence_min=2", undefined, "confidence_min"],
          ["GET", "/graph/intelligence?window_days=-1", undefined, "window_days"],
          ["GET", "/graph/intelligence?node_kind=person", undefined, "node_kind"],
          ["GET", "/graph/intelligence?limit=0", undefined, "limit"],
          ["GET", "/graph/summary?surface=both", undefined, "surface"],
          ["POST", "/graph/investigate", {}, "query"],
          ["POST", "/graph/investigate", { query: "Alice", limit: 101 }, "limit"],
          ["POST", "/graph/investigate", { query: "Alice", confidence_min: 2 }, "confidence_min"]
        ] as const
      ) {
        const bad = yield* request(method, path, body)
        assert.strictEqual(bad.status, 400, `${method} ${path}`)
        assert.deepStrictEqual(bad.body.errors.map((e: any) => e.field), [field], bad.text)
      }
      const missing = yield* server.request("GET", "/v1/default/banks/no-such-bank/graph/intelligence")
      assert.strictEqual(missing.status, 404)
      const nobody = yield* server.request("POST", "/v1/default/banks/no-such-bank/graph/investigate", {
        json: { query: "x" }
      })
      assert.strictEqual(nobody.status, 404)
    }))
})
