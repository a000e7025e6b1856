/**
 * Recall over HTTP: relevance, every request field (types, budget, token budget, time, tags with the exact
 * tags_match semantics for tagged and untagged memories, tag groups, includes, trace, branch) and bad input.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = (id: string) => `/v1/default/banks/${id}`
const recall = (id: string, json: unknown) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("POST", `${bank(id)}/memories/recall`, { json })
  })

const retain = (id: string, items: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request("POST", `${bank(id)}/memories`, { json: { items } })
  })

layer(testApp(), { excludeTestServices: true })("recall", (it) => {
  it.effect("finds the relevant memory first, with its metadata, entities and the spec's response shape", () =>
    Effect.gen(function*() {
      yield* retain("basic", [
        {
          content: "Melanie painted a sunrise over the lake in 2022.",
          metadata: { dia_id: "D1:12" },
          timestamp: "2023-05-08T10:00:00Z"
        },
        {
          content: "Caroline researched adoption agencies last week.",
          metadata: { dia_id: "D2:8" },
          timestamp: "2023-06-01T10:00:00Z"
        },
        { content: "The team ordered pizza for the launch party.", timestamp: "2023-06-02T10:00:00Z" }
      ])
      const response = yield* recall("basic", { query: "What did Caroline research?" })
      assert.strictEqual(response.status, 200, response.text)
      assert.deepStrictEqual(Object.keys(response.body).sort(), [
        "chunks",
        "entities",
        "results",
        "source_facts",
        "trace"
      ])
      const top = response.body.results[0]
      assert.include(top.text, "adoption agencies")
      assert.deepStrictEqual(top.metadata, { dia_id: "D2:8" })
      assert.include(top.entities, "Caroline")
      assert.isNumber(top.score)
      assert.isNotNull(response.body.entities)
      assert.isDefined(response.body.entities["Caroline"])
      assert.isNull(response.body.chunks)
      assert.isNull(response.body.trace)
    }))

  it.effect("tags_match: any and all include untagged memories, the strict forms exclude them", () =>
    Effect.gen(function*() {
      yield* retain("tags", [
        { content: "Memory A about apples.", tags: ["a"] },
        { content: "Memory B about bananas.", tags: ["b"] },
        { content: "Memory C about apples and bananas.", tags: ["a", "b"] },
        { content: "Memory D about dates." }
      ])
      const letters = (body: any) => body.results.map((r: any) => r.text.match(/Memory (\w)/)[1]).sort().join("")
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ tags: ["a"], tags_match: "any" }, "ACD"],
        [{ tags: ["a"] }, "ACD"],
        [{ tags: ["a"], tags_match: "any_strict" }, "AC"],
        [{ tags: ["a", "b"], tags_match: "all" }, "CD"],
        [{ tags: ["a", "b"], tags_match: "all_strict" }, "C"],
        [{ tags: ["a", "b"], tags_match: "any_strict" }, "ABC"],
        [{ tag_groups: [{ or: [{ tags: ["a"], match: "all_strict" }, { tags: ["b"], match: "all_strict" }] }] }, "ABC"],
        [{ tag_groups: [{ not: { tags: ["a"], match: "any_strict" } }] }, "BD"],
        [{ tag_groups: [{ tags: ["a"], match: "any_strict" }, { not: { tags: ["b"], match: "any_strict" } }] }, "A"],
        [{ tag_groups: [{ and: [{ tags: ["a"], match: "any" }, { tags: ["b"], match: "any" }] }] }, "CD"]
      ]
      for (const [scope, expected] of cases) {
        const response = yield* recall("tags", { query: "memory about fruit", budget: "high", ...(scope as object) })
        assert.strictEqual(response.status, 200, response.text)
        assert.strictEqual(letters(response.body), expected, JSON.stringify(scope))
      }
    }))

  it.effect("types, token budget, includes, trace and time", () =>
    Effect.gen(function*() {
      yield* retain("fields", [
        { content: "I ran the Boston marathon yesterday.", timestamp: "2024-04-16T09:00:00Z" },
        { content: "Boston is the capital of Massachusetts." },
        { content: "I bought running shoes in January.", timestamp: "2024-02-01T09:00:00Z" }
      ])
      const worldOnly = yield* recall("fields", { query: "Boston", types: ["world"] })
      assert.deepStrictEqual([...new Set(worldOnly.body.results.map((r: any) => r.type))], ["world"])

      const all = yield* recall("fields", { query: "Boston marathon running" })
      const small = yield* recall("fields", { query: "Boston marathon running", max_tokens: 30 })
      assert.isAbove(all.body.results.length, small.body.results.length)
      assert.isAtLeast(small.body.results.length, 1)
      const none = yield* recall("fields", { query: "Boston", max_tokens: 0 })
      assert.deepStrictEqual(none.body.results, [])

      const included = yield* recall("fields", {
        query: "marathon",
        include: { chunks: { max_tokens: 1000 }, entities: null },
        trace: true
      })
      assert.isNull(included.body.entities)
      const chunkIds = Object.keys(included.body.chunks)
      assert.isAbove(chunkIds.length, 0)
      assert.include(included.body.chunks[included.body.results[0].chunk_id].text, "marathon")
      assert.includeMembers(Object.keys(included.body.trace.strategies), ["semantic", "keyword", "graph"])
      assert.isNumber(included.body.trace.strategies.semantic.duration_ms)
      assert.isArray(included.body.trace.strategies.keyword.candidates)

      const timed = yield* recall("fields", { query: "what did I do in April 2024?", trace: true })
      assert.isDefined(timed.body.trace.strategies.temporal)
      assert.include(timed.body.results[0].text, "marathon")
      const byTimestamp = yield* recall("fields", {
        query: "what happened",
        query_timestamp: "2024-02-01T12:00:00Z",
        trace: true
      })
      assert.isDefined(byTimestamp.body.trace.strategies.temporal)
      for (const budget of ["low", "mid", "high"]) {
        const response = yield* recall("fields", { query: "Boston", budget })
        assert.strictEqual(response.status, 200)
      }
    }))

  it.effect("text without spaces (Chinese, Japanese) is found by keyword", () =>
    Effect.gen(function*() {
      yield* retain("cjk", [
        { content: "我每天早上都喝咖啡。" },
        { content: "今天的天气非常好。" },
        { content: "東京で新しい仕事を始めました。" }
      ])
      const coffee = yield* recall("cjk", { query: "咖啡", trace: true })
      assert.include(coffee.body.results[0].text, "咖啡")
      assert.strictEqual(coffee.body.trace.strategies.keyword.candidates.length, 1)
      const work = yield* recall("cjk", { query: "仕事", trace: true })
      assert.include(work.body.results[0].text, "仕事")
    }))

  it.effect("recall keeps answering while a large asynchronous retain runs in the same bank", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      yield* retain("busy", [{ content: "The lighthouse keeper logs the weather every morning." }])
      const items = Array.from(
        { length: 300 },
        (_, n) => ({ content: `Log entry ${n}: wind from the ${n % 2 ? "north" : "south"} at ${n % 40} knots.` })
      )
      const queued = yield* server.request("POST", `${bank("busy")}/memories`, { json: { items, async: true } })
      let answered = 0
      let sawRunning = false
      for (let i = 0; i < 20; i++) {
        const status = yield* server.request("GET", `${bank("busy")}/operations/${queued.body.operation_id}`)
        if (status.body.status === "running") sawRunning = true
        const response = yield* recall("busy", { query: "lighthouse keeper weather" })
        assert.strictEqual(response.status, 200)
        assert.include(response.body.results[0].text, "lighthouse")
        answered++
        if (status.body.status === "completed") break
      }
      assert.isTrue(sawRunning, "the retain was still running while recall answered")
      assert.isAtLeast(answered, 2)
    }))

  it.effect("bad input answers 400 naming the field; unknown banks and branches 404", () =>
    Effect.gen(function*() {
      yield* retain("bad", [{ content: "Something to find." }])
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ query: "" }, "query"],
        [{ query: "   " }, "query"],
        [{}, "query"],
        [{ query: "x", budget: "huge" }, "budget"],
        [{ query: "x", types: ["dreams"] }, "types.0"],
        [{ query: "x", max_tokens: -5 }, "max_tokens"],
        [{ query: "x", tags: ["a"], tag_groups: [{ tags: ["b"] }] }, "tag_groups"],
        [{ query: "x", tags_match: "some" }, "tags_match"],
        [{ query: "x", min_score: { threshold: 2 } }, "min_score.threshold"],
        [{ query: "x", query_timestamp: "yesterday" }, "query_timestamp"]
      ]
      for (const [json, field] of cases) {
        const response = yield* recall("bad", json)
        assert.strictEqual(response.status, 400, JSON.stringify(json))
        assert.include(response.body.errors.map((e: any) => e.field), field, JSON.stringify(json))
      }
      const unknownBank = yield* recall("no-such-bank", { query: "x" })
      assert.strictEqual(unknownBank.status, 404)
      const branch = yield* recall("bad", { query: "x", branch_name: "feature" })
      assert.strictEqual(branch.status, 404)
      assert.include(branch.body.detail, "feature")
      const main = yield* recall("bad", { query: "something", branch_name: "main" })
      assert.strictEqual(main.status, 200)
      const strict = yield* recall("bad", { query: "something", min_score: { threshold: 0.99 } })
      assert.deepStrictEqual(strict.body.results, [])
    }))
})
