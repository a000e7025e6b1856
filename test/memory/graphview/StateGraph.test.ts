/**
 * The state surface's arithmetic on crafted evidence: the confidence formula and its threshold, duplicates versus
 * contradictions, change and contradiction events, staleness next to a moving neighbour, and the ranking.
 */
import { assert, describe, it } from "@effect/vitest"
import { buildStateGraph } from "../../../src/memory/graphview/StateGraph.ts"
import { conviction, distinctUnits, nodeConfidence } from "../../../src/memory/graphview/StateNodes.ts"
import type { StateUnit } from "../../../src/memory/graphview/StateUnits.ts"

const day = 86_400_000
const now = Date.UTC(2026, 5, 1)

const unit = (id: string, text: string, daysAgo: number, options: Partial<StateUnit> = {}): StateUnit => ({
  id,
  text,
  at: now - daysAgo * day,
  proofs: 1,
  accesses: 0,
  tags: [],
  entities: [],
  embedding: null,
  docKey: id,
  expiresAt: null,
  ...options
})

const vector = (...values: Array<number>) => Float32Array.from(values)
const all = { confidenceMin: 0.55, nodeKind: "all" as const }

describe("state graph", () => {
  it("confidence follows the reference formula and drops weak groups", () => {
    // Two fresh memories with one proof each: 0.2 + 0.15·ln 3 + 0.04·ln 3 + 0 + 0.25.
    const fresh = [unit("a", "x", 0), unit("b", "y", 0)]
    assert.closeTo(nodeConfidence(fresh, now, now), 0.2 + 0.15 * Math.log(3) + 0.04 * Math.log(3) + 0.25, 1e-9)
    // One memory a year old falls below 0.55 and is not a node.
    const graph = buildStateGraph([unit("old", "Dora paints.", 365, { entities: ["Dora"] })], all, now)
    assert.strictEqual(graph.nodes.length, 0)
    assert.strictEqual(
      buildStateGraph([unit("old", "Dora paints.", 365, { entities: ["Dora"] })], { ...all, confidenceMin: 0 }, now)
        .nodes.length,
      1
    )
  })

  it("conviction is the mean pairwise cosine of the memories' embeddings", () => {
    const vectors = [vector(1, 0, 0), vector(2, 2, 0), vector(0, 0, 3), vector(1, 1, 1)]
    const cos = (a: Float32Array, b: Float32Array) =>
      a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.hypot(...a) / Math.hypot(...b)
    let sum = 0
    for (let i = 0; i < vectors.length; i++) {
      for (let j = i + 1; j < vectors.length; j++) sum += cos(vectors[i]!, vectors[j]!)
    }
    const units = vectors.map((embedding, i) => unit(`u${i}`, `text ${i}`, i, { embedding }))
    assert.closeTo(conviction(units)!, sum / 6, 1e-6)
    assert.isNull(conviction(units.slice(0, 1)))
  })

  it("a near-copy is a duplicate, a negated near-copy is not", () => {
    const kept = distinctUnits([
      unit("a", "Alice works at Acme.", 3, { embedding: vector(1, 0, 0) }),
      unit("b", "Alice works at Acme!", 2, { embedding: vector(1, 0.01, 0) }),
      unit("c", "Alice no longer works at Acme.", 1, { embedding: vector(1, 0.02, 0) })
    ])
    assert.deepStrictEqual(kept.map((u) => u.id), ["a", "c"])
  })

  it("opposite polarity on the same matter is a contradiction; a different matter is a change", () => {
    const alice = (id: string, text: string, daysAgo: number, embedding: Float32Array) =>
      unit(id, text, daysAgo, { entities: ["Alice", "Acme"], embedding, tags: ["work"] })
    const graph = buildStateGraph(
      [
        alice("a", "Alice works at Acme as an engineer.", 10, vector(1, 0.2, 0)),
        alice("b", "Alice no longer works at Acme.", 5, vector(1, 0.1, 0)),
        alice("c", "Alice moved to Paris with her family.", 1, vector(0, 1, 1))
      ],
      all,
      now
    )
    const node = graph.nodes.find((n) => n.id === "entity:alice")!
    assert.strictEqual(node.status, "contradictory")
    const types = graph.events.filter((e) => e.node_id === "entity:alice").map((e) => e.change_type).sort()
    assert.deepStrictEqual(types, ["change", "contradiction"])
    const contradiction = graph.events.find((e) => e.change_type === "contradiction")!
    assert.deepStrictEqual(contradiction.evidence_ids, ["a", "b"])
    // Acme is named second in every memory: it is never the leading entity, so it records no event.
    assert.strictEqual(graph.nodes.find((n) => n.id === "entity:acme")!.status, "stable")
    // A contradiction lowers the surfaced confidence: conf · (1 − 0.9·conf·0.6).
    const raw = nodeConfidence([...graph.units.values()], now - day, now)
    assert.closeTo(node.confidence, raw * (1 - 0.9 * raw * 0.6), 1e-3)
    assert.strictEqual(graph.nodes[0]!.id, "entity:alice")
    assert.isNotNull(node.semantic_change_magnitude)
  })

  it("an old node next to a moving one goes stale", () => {
    const units = [
      unit("p1", "Project Falcon uses Postgres.", 120, { entities: ["Falcon", "Bob"], proofs: 6, accesses: 6 }),
      unit("p2", "Project Falcon has a weekly review.", 100, { entities: ["Falcon"], proofs: 6, accesses: 6 }),
      unit("b1", "Bob leads the search team.", 20, { entities: ["Bob"] }),
      unit("b2", "Bob quit the search team.", 2, { entities: ["Bob"] })
    ]
    const graph = buildStateGraph(units, { ...all, confidenceMin: 0 }, now)
    const falcon = graph.nodes.find((n) => n.id === "entity:falcon")!
    assert.strictEqual(graph.nodes.find((n) => n.id === "entity:bob")!.status, "contradictory")
    assert.strictEqual(falcon.status, "stale")
    assert.strictEqual(falcon.status_reason, "Falcon has not been refreshed while connected signals moved.")
    assert.isTrue(graph.events.some((e) => e.id === "event:entity:falcon:stale"))
  })
})
