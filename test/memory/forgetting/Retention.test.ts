/**
 * A bank's retention policy over the real HTTP server on both database tiers: `retention` in `PATCH {bank}/config`
 * is validated (400 naming the field, nothing changed), merged key by key and shown in the config view; setting a
 * maximum age removes the facts stored longer ago with the observations resting on them, and a maximum count evicts
 * the least influential facts (those reads never returned) while keeping the ones recall keeps returning. Both are
 * audited without content. The passage of time is made by moving stored `created_at` values into the past.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AccessTelemetry } from "../../../src/activity/AccessTelemetry.ts"
import { GraphRecall } from "../../../src/memory/recall/GraphRecall.ts"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { factCount } from "../../support/DerivedState.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const listedTexts = (bank: string) =>
  Effect.map(
    ok("GET", `${bankPath(bank)}/memories/list?limit=1000`),
    (r) => (r.body.items as Array<any>).map((x) => x.text as string)
  )

layer(testApp({ enableObservations: true, mcpToolFamilies: ["forgetting"] }), {
  excludeTestServices: true,
  timeout: "3 minutes"
})("retention", (it) => {
  it.effect("bad retention values are refused naming the field; good ones merge key by key and show in the config", () =>
    Effect.gen(function*() {
      const base = bankPath("retention-config")
      yield* ok("PUT", base, {})
      const quiet = yield* ok("GET", `${base}/config`)
      assert.deepStrictEqual(quiet.body.config.retention, {
        max_age_days: { world: null, experience: null, observation: null, opinion: null },
        max_memories: null,
        recency_half_life_days: null
      })
      for (
        const [retention, field] of [
          [{ max_age_days: { world: -1 } }, "retention.max_age_days.world"],
          [{ max_age_days: { experience: 1.5 } }, "retention.max_age_days.experience"],
          [{ max_age_days: { opinion: "a year" } }, "retention.max_age_days.opinion"],
          [{ max_memories: -5 }, "retention.max_memories"],
          [{ recency_half_life_days: -2 }, "retention.recency_half_life_days"],
          [{ recency_half_life_days: 100_000 }, "retention.recency_half_life_days"],
          [{ max_age_days: 30 }, "retention.max_age_days"]
        ] as const
      ) {
        const bad = yield* call("PATCH", `${base}/config`, { updates: { retention } })
        assert.strictEqual(bad.status, 400, bad.text)
        assert.include(bad.body.detail, field)
      }
      assert.deepStrictEqual((yield* ok("GET", `${base}/config`)).body, quiet.body, "a refused update changed nothing")

      yield* ok("PATCH", `${base}/config`, { updates: { retention: { max_age_days: { world: 365, experience: 30 } } } })
      const merged = yield* ok("PATCH", `${base}/config`, {
        updates: {
          retention: { max_age_days: { experience: 0, opinion: 7 }, max_memories: 5000, recency_half_life_days: 90 }
        }
      })
      assert.deepStrictEqual(merged.body.config.retention, {
        max_age_days: { world: 365, experience: null, observation: null, opinion: 7 },
        max_memories: 5000,
        recency_half_life_days: 90
      })
      assert.deepStrictEqual(merged.body.overrides.retention, {
        max_age_days: { world: 365, opinion: 7 },
        max_memories: 5000,
        recency_half_life_days: 90
      })
      const reset = yield* ok("DELETE", `${base}/config`)
      assert.isNull(reset.body.config.retention.max_memories)
      assert.isUndefined(reset.body.overrides.retention)
    }))

  it.effect("a maximum age removes older facts with the observations built on them, audited without content", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const graph = yield* GraphRecall
      const bank = "retention-age"
      const base = bankPath(bank)
      const old = [
        "Ottoline fixed the espresso machine in the kitchen.",
        "Ottoline refilled the kitchen espresso beans."
      ]
      const recent = [
        "Percival booked the meeting room for Friday.",
        "Percival ordered new chairs for the meeting room."
      ]
      yield* ok("POST", `${base}/memories`, { items: [...old, ...recent].map((content) => ({ content })) })
      yield* settled(bank)
      const oldIds = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank}
        AND fact_type IN ('world', 'experience') AND text LIKE '%Ottoline%'`).map((row) => row.id)
      assert.lengthOf(oldIds, old.length)
      const observations = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
        WHERE bank_id = ${bank} AND fact_type = 'observation' AND source_fact_ids && ${oldIds}::text[]`
      assert.isAtLeast(observations[0]!.n, 1, "an observation was built on the old facts")
      // Time passes for the old facts: stored 40 days ago.
      yield* sql`UPDATE memory_units SET created_at = now() - interval '40 days' WHERE id IN ${sql.in(oldIds)}`
      yield* graph.changed(bank)

      yield* ok("PATCH", `${base}/config`, { updates: { retention: { max_age_days: { world: 30, experience: 30 } } } })
      yield* settled(bank)
      const texts = yield* listedTexts(bank)
      for (const text of old) assert.notInclude(texts.join("\n"), text.slice(0, 20))
      assert.isTrue(texts.some((text) => text.includes("Percival")), "the recent facts stay")
      const citing = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_units
        WHERE bank_id = ${bank} AND fact_type = 'observation' AND source_fact_ids && ${oldIds}::text[]`
      assert.strictEqual(citing[0]!.n, 0, "no observation rests on an evicted fact any more")
      const recalled = yield* ok("POST", `${base}/memories/recall`, {
        query: "Who fixed the espresso machine?",
        budget: "high"
      })
      assert.notInclude(recalled.text, "Ottoline")

      const operations = (yield* ok("GET", `${base}/operations?task_type=retention_sweep`)).body.operations as Array<
        any
      >
      const sweep = operations.find((op) => op.task_type === "retention_sweep")
      assert.isDefined(sweep, JSON.stringify(operations))
      assert.strictEqual(sweep.status, "completed")
      const audit = yield* ok("GET", `${base}/audit-logs?action=memories.retention_sweep`)
      assert.isAtLeast(audit.body.total, 1, audit.text)
      assert.include(audit.text, "max_age_days")
      assert.notInclude(audit.text, "Ottoline")
      assert.notInclude(audit.text, "espresso")
    }))

  it.effect("a maximum count evicts the least influential facts and keeps the ones reads return", () =>
    Effect.gen(function*() {
      const telemetry = yield* AccessTelemetry
      const bank = "retention-count"
      const base = bankPath(bank)
      const kept = [
        "Rosalind keeps the server room key in her desk drawer.",
        "Rosalind rotates the server room backups weekly."
      ]
      const idle = [
        "The lobby plant was repotted in spring.",
        "The parking lot was repainted last summer.",
        "The vending machine takes only coins.",
        "The library shelves were dusted on Sunday."
      ]
      yield* ok("POST", `${base}/memories`, { items: [...kept, ...idle].map((content) => ({ content })) })
      yield* settled(bank)
      for (let i = 0; i < 5; i++) {
        const recalled = yield* ok("POST", `${base}/memories/recall`, {
          query: "Rosalind server room key backups",
          budget: "low",
          max_tokens: 120
        })
        assert.include(recalled.text, "Rosalind")
      }
      yield* telemetry.flush
      const before = yield* factCount(bank)
      assert.isAtLeast(before, kept.length + idle.length)

      const limit = before - idle.length + 1
      yield* ok("PATCH", `${base}/config`, { updates: { retention: { max_memories: limit } } })
      yield* settled(bank)
      assert.strictEqual(yield* factCount(bank), limit)
      const texts = (yield* listedTexts(bank)).join("\n")
      for (const text of kept) assert.include(texts, text.slice(0, 30), "a fact recall keeps returning is kept")
      const audit = yield* ok("GET", `${base}/audit-logs?action=memories.retention_sweep`)
      assert.include(audit.text, "max_memories")
      assert.notInclude(audit.text, "vending")

      // Under the limit again: a later look queues nothing.
      yield* ok("PATCH", `${base}/config`, { updates: { retention: { max_memories: limit } } })
      const sweeps = (yield* ok("GET", `${base}/operations`)).body.operations.filter((op: any) =>
        op.task_type === "retention_sweep"
      )
      assert.lengthOf(sweeps, 1)

      // Retains that take the bank past its limit again have it swept, with no config change: the scheduler is told
      // which banks grew (nothing polls).
      yield* ok("POST", `${base}/memories`, {
        items: [{ content: "The copier on floor two jams on thick paper." }, {
          content: "The fire exit signs were replaced in May."
        }]
      })
      assert.isAbove(yield* factCount(bank), limit)
      yield* eventually(factCount(bank), (n) => n === limit, Duration.seconds(30))
    }))

  it.effect("recency decay, off by default, ranks a memory learned this week above an equally relevant one from years ago", () =>
    Effect.gen(function*() {
      const base = bankPath("retention-recency")
      const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString()
      yield* ok("POST", `${base}/memories`, {
        items: [
          { content: "Quentin visited the harbour museum with his sister.", timestamp: "2019-03-01T10:00:00Z" },
          { content: "Quentin visited the harbour museum with his brother.", timestamp: weekAgo }
        ]
      })
      yield* settled("retention-recency")
      const scores = Effect.gen(function*() {
        const results = (yield* ok("POST", `${base}/memories/recall`, { query: "Quentin visited the harbour museum" }))
          .body.results as Array<any>
        const of = (word: string) => results.find((result) => result.text.includes(word))
        assert.isDefined(of("sister"))
        assert.isDefined(of("brother"))
        return {
          old: of("sister").score as number,
          recent: of("brother").score as number,
          first: results[0].text as string
        }
      })
      const off = yield* scores
      yield* ok("PATCH", `${base}/config`, { updates: { retention: { recency_half_life_days: 30 } } })
      const on = yield* scores
      assert.include(on.first, "brother", "the memory learned this week ranks first")
      assert.isBelow(on.old, off.old * 0.6, "a memory years old keeps about half its score")
      assert.isAbove(on.recent, off.recent * 0.85, "a memory a week old keeps nearly all of it")
      yield* ok("PATCH", `${base}/config`, { updates: { retention: { recency_half_life_days: 0 } } })
      assert.deepStrictEqual(yield* scores, off, "0 switches decay off again")
    }))

  it.effect("MCP reads and sets the policy like the config does, and refuses a bad value naming the field", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bank = "retention-mcp"
      yield* ok("PUT", bankPath(bank), {})
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
      const quiet = yield* mcp.ok("get_retention", {})
      assert.isNull(quiet.retention.max_memories)
      const set = yield* mcp.ok("set_retention", { max_age_days: { opinion: 14 }, recency_half_life_days: 60 })
      assert.strictEqual(set.retention.max_age_days.opinion, 14)
      assert.strictEqual(set.retention.recency_half_life_days, 60)
      const config = (yield* ok("GET", `${bankPath(bank)}/config`)).body
      assert.deepStrictEqual(config.config.retention, set.retention)
      assert.include(yield* mcp.fails("set_retention", { max_memories: -1 }), "max_memories")
      assert.deepStrictEqual((yield* mcp.ok("get_retention", {})).retention, set.retention)
    }))

  it.effect("a policy that arrives by a template import is enforced at once, as one saved through the config is", () =>
    Effect.gen(function*() {
      const bank = "retention-template"
      const base = bankPath(bank)
      yield* ok("POST", `${base}/memories`, {
        items: ["Ignatius sorts the mail.", "Ignatius orders the printer toner.", "Ignatius books the meeting rooms."]
          .map((content) => ({ content }))
      })
      yield* settled(bank)
      assert.isAbove(yield* factCount(bank), 1)
      const imported = yield* call("POST", `${base}/import`, { version: "1", bank: { retention: { max_memories: 1 } } })
      assert.strictEqual(imported.status, 200, imported.text)
      yield* eventually(factCount(bank), (n) => n === 1, Duration.seconds(30))
    }))
})
