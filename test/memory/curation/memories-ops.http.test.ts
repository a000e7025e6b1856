/**
 * The memory operations of the published Hindsight client 0.9.1 over the real HTTP server, driven through the
 * client package itself: curating a memory (edit, invalidate with a reason, restore), a dry-run extraction that
 * leaves the bank unchanged, the ingestion time series, the entity co-occurrence graph and observation scopes.
 * Every bad input answers 4xx with `detail` and changes nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createClient, createConfig, sdk } from "@vectorize-io/hindsight-client"
import { bankPath, call, ok, settled } from "../../support/HttpCalls.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"
import { eventually } from "../../support/TestTasks.ts"

const rawClient = Effect.map(TestServer, (server) => createClient(createConfig({ baseUrl: server.url })))
const promise = <A>(run: () => Promise<A>) => Effect.promise(run)

/** Each test seeds a bank of its own, so that it runs alone and no test reads what another wrote. */
const seed = (bank: string) =>
  ok("POST", `${bankPath(bank)}/memories`, {
    items: [
      {
        content: "Alice and Bob founded a bakery in Porto. The bakery sells sourdough bread every morning.",
        entities: [{ text: "Alice" }, { text: "Bob" }],
        tags: ["team"]
      },
      { content: "The deploy server srv-04 runs PostgreSQL 14.", tags: ["infra"] }
    ]
  })

const listed = (bank: string) =>
  Effect.map(call("GET", `${bankPath(bank)}/memories/list?limit=1000`), (r) => r.body.items as Array<any>)

const recallTexts = (bank: string, query: string) =>
  Effect.map(ok("POST", `${bankPath(bank)}/memories/recall`, { query }), (r) => r.body.results.map((x: any) => x.id))

/** Seeds the bank and edits its server fact through the client: new text, dates and entities. */
const seedAndEdit = (bank: string) =>
  Effect.gen(function*() {
    yield* seed(bank)
    const raw = yield* rawClient
    const server = (yield* listed(bank)).find((m) => m.text.includes("srv-04"))
    assert.isDefined(server)
    const edited = yield* promise(() =>
      sdk.updateMemory({
        client: raw,
        path: { bank_id: bank, memory_id: server.id },
        body: {
          text: "The deploy server srv-04 runs PostgreSQL 16 after the zeppelin upgrade.",
          occurred_start: "2024-03-01T00:00:00Z",
          occurred_end: "2024-03-02T00:00:00Z",
          entities: ["srv-04", "PostgreSQL"],
          context: ""
        }
      })
    )
    assert.strictEqual(edited.response.status, 200, JSON.stringify(edited.error))
    return { server, edited: edited.data as any }
  })

/** Everything a write could touch, to show that a request changed nothing. */
const snapshot = (bankId: string) =>
  Effect.gen(function*() {
    const memories = yield* call("GET", `${bankPath(bankId)}/memories/list?limit=1000`)
    const documents = yield* call("GET", `${bankPath(bankId)}/documents`)
    const entities = yield* call("GET", `${bankPath(bankId)}/entities?limit=1000`)
    const operations = yield* call("GET", `${bankPath(bankId)}/operations`)
    return {
      memories: memories.body.items.map((m: any) => JSON.stringify(m)).sort(),
      documents: documents.body.items.map((d: any) => JSON.stringify(d)).sort(),
      entities: entities.body.items.map((e: any) => JSON.stringify(e)).sort(),
      operations: operations.body.total
    }
  })

layer(testApp(), { excludeTestServices: true })("memory operations of the 0.9 client", (it) => {
  it.effect("updateMemory edits text, dates and entities; recall and the graph follow", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-edit"
      const { server, edited: body } = yield* seedAndEdit(bank)
      assert.strictEqual(body.id, server.id)
      assert.strictEqual(body.text, "The deploy server srv-04 runs PostgreSQL 16 after the zeppelin upgrade.")
      assert.strictEqual(body.occurred_start, "2024-03-01T00:00:00.000Z")
      assert.strictEqual(body.occurred_end, "2024-03-02T00:00:00.000Z")
      assert.deepStrictEqual([...body.entities].sort(), ["PostgreSQL", "srv-04"])
      assert.strictEqual(body.context, null)
      assert.strictEqual(body.state, "valid")
      const fetched = yield* call("GET", `${bankPath(bank)}/memories/${server.id}`)
      assert.strictEqual(fetched.body.text, body.text)
      // The keyword index took the new wording in: recall finds it by a word only the edit introduced.
      assert.include(yield* recallTexts(bank, "zeppelin upgrade"), server.id)
      const entities = yield* call("GET", `${bankPath(bank)}/entities?limit=100`)
      assert.include(entities.body.items.map((e: any) => e.canonical_name), "srv-04")
    }))

  it.effect("updateMemory invalidates with a reason (out of recall and lists) and restores", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-invalidate"
      yield* seedAndEdit(bank)
      const raw = yield* rawClient
      const fact = (yield* listed(bank)).find((m) => m.text.includes("zeppelin"))
      assert.isDefined(fact)
      const invalidated = yield* promise(() =>
        sdk.updateMemory({
          client: raw,
          path: { bank_id: bank, memory_id: fact.id },
          body: { state: "invalidated", reason: "server decommissioned" }
        })
      )
      assert.strictEqual(invalidated.response.status, 200, JSON.stringify(invalidated.error))
      const body = invalidated.data as any
      assert.strictEqual(body.state, "invalidated")
      assert.strictEqual(body.invalidation_reason, "server decommissioned")
      assert.isTrue(Number.isFinite(Date.parse(body.invalidated_at)))
      assert.strictEqual(body.text, fact.text)
      assert.deepStrictEqual([...body.entities].sort(), ["PostgreSQL", "srv-04"])
      assert.notInclude((yield* listed(bank)).map((m) => m.id), fact.id)
      assert.notInclude(yield* recallTexts(bank, "zeppelin upgrade"), fact.id)
      // Kept for audit: the memory still reads, with its state.
      const audit = yield* call("GET", `${bankPath(bank)}/memories/${fact.id}`)
      assert.strictEqual(audit.status, 200)
      assert.strictEqual(audit.body.state, "invalidated")
      // Editing an invalidated memory needs a restore first.
      const conflict = yield* call("PATCH", `${bankPath(bank)}/memories/${fact.id}`, { text: "something else" })
      assert.strictEqual(conflict.status, 409)
      assert.isString(conflict.body.detail)

      const restored = yield* promise(() =>
        sdk.updateMemory({ client: raw, path: { bank_id: bank, memory_id: fact.id }, body: { state: "valid" } })
      )
      assert.strictEqual(restored.response.status, 200, JSON.stringify(restored.error))
      assert.strictEqual((restored.data as any).state, "valid")
      assert.deepStrictEqual([...(restored.data as any).entities].sort(), ["PostgreSQL", "srv-04"])
      assert.include((yield* listed(bank)).map((m) => m.id), fact.id)
      assert.include(yield* recallTexts(bank, "zeppelin upgrade"), fact.id)
    }))

  it.effect("dryRunExtractMemories returns candidate facts and leaves the bank unchanged", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-dry-run"
      yield* seed(bank)
      const raw = yield* rawClient
      yield* settled(bank)
      const before = yield* snapshot(bank)
      const response = yield* promise(() =>
        sdk.dryRunExtractMemories({
          client: raw,
          path: { bank_id: bank },
          body: {
            content: "Carol visited Kyoto in April 2023. She loved the temples and plans to return next spring.",
            context: "travel diary",
            timestamp: "2023-05-01T10:00:00Z",
            retain_extraction_mode: "verbose"
          }
        })
      )
      assert.strictEqual(response.response.status, 200, JSON.stringify(response.error))
      const result = response.data!
      assert.isAbove(result.facts!.length, 0)
      for (const fact of result.facts!) {
        assert.isString(fact.text)
        assert.include(["world", "experience"], fact.fact_type)
        assert.isArray(fact.entities)
      }
      assert.isTrue(result.facts!.some((fact) => fact.text.includes("Kyoto")))
      assert.deepStrictEqual(result.usage, { input_tokens: 0, output_tokens: 0, total_tokens: 0 })
      assert.deepStrictEqual(yield* snapshot(bank), before)
    }))

  it.effect("getMemoriesTimeseries buckets the bank's memories by fact type over a padded period", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-series"
      yield* seed(bank)
      const raw = yield* rawClient
      const total = (yield* listed(bank)).length
      assert.isAbove(total, 0)
      const week = yield* promise(() => sdk.getMemoriesTimeseries({ client: raw, path: { bank_id: bank } }))
      assert.strictEqual(week.response.status, 200)
      const series = week.data!
      assert.strictEqual(series.bank_id, bank)
      assert.strictEqual(series.period, "7d")
      assert.strictEqual(series.trunc, "day")
      assert.strictEqual(series.time_field, "created_at")
      assert.strictEqual(series.buckets!.length, 7)
      for (const bucket of series.buckets!) assert.match(bucket.time, /Z$/)
      const last = series.buckets!.at(-1)!
      assert.strictEqual(last.world! + last.experience! + last.observation!, total)
      const hour = yield* promise(() =>
        sdk.getMemoriesTimeseries({
          client: raw,
          path: { bank_id: bank },
          query: { period: "1h", time_field: "mentioned_at" }
        })
      )
      assert.strictEqual(hour.data!.trunc, "minute")
      assert.strictEqual(hour.data!.buckets!.length, 60)
      assert.strictEqual(hour.data!.time_field, "mentioned_at")
    }))

  it.effect("getEntityGraph links entities named by the same facts", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-entities"
      yield* seedAndEdit(bank)
      const raw = yield* rawClient
      const response = yield* promise(() => sdk.getEntityGraph({ client: raw, path: { bank_id: bank } }))
      assert.strictEqual(response.response.status, 200)
      const graph = response.data!
      assert.strictEqual(graph.limit, 1000)
      const names = new Map(graph.nodes.map((node: any) => [node.id, node.label]))
      const pairs = graph.edges.map((edge: any) => [names.get(edge.source), names.get(edge.target)].sort().join("+"))
      assert.include(pairs, "Alice+Bob")
      assert.include(pairs, "PostgreSQL+srv-04")
      assert.isAtLeast(graph.total_entities, graph.nodes.length)
      assert.strictEqual(graph.total_edges, graph.edges.length)
      for (const edge of graph.edges) assert.isAtLeast((edge as any).cooccurrence_count, 1)
      const limited = yield* promise(() =>
        sdk.getEntityGraph({ client: raw, path: { bank_id: bank }, query: { limit: 1, min_count: 1 } })
      )
      assert.strictEqual(limited.data!.edges.length, 1)
      assert.strictEqual(limited.data!.total_edges, graph.total_edges)
    }))

  it.effect("bad input answers 4xx with detail naming the field, and changes nothing", () =>
    Effect.gen(function*() {
      const bank = "memory-ops-refusals"
      yield* seed(bank)
      yield* settled(bank)
      const before = yield* snapshot(bank)
      const fact = (yield* listed(bank))[0]
      const memory = `${bankPath(bank)}/memories/${fact.id}`
      const cases: Array<[string, string, unknown, number, string | undefined]> = [
        ["PATCH", memory, {}, 400, "body"],
        ["PATCH", memory, { state: "gone" }, 400, "state"],
        ["PATCH", memory, { occurred_start: "yesterday" }, 400, "occurred_start"],
        ["PATCH", memory, { occurred_start: "2024-05-02", occurred_end: "2024-05-01" }, 400, "occurred_end"],
        ["PATCH", memory, { fact_type: "observation" }, 400, "fact_type"],
        ["PATCH", memory, { text: "" }, 400, "text"],
        ["PATCH", memory, { entities: [""] }, 400, "entities.0"],
        ["PATCH", `${bankPath(bank)}/memories/nope`, { state: "invalidated" }, 404, undefined],
        ["PATCH", `${bankPath("no-such-bank")}/memories/nope`, { state: "invalidated" }, 404, undefined],
        ["POST", `${bankPath(bank)}/memories/dry-run-extract`, { content: "" }, 400, "content"],
        ["POST", `${bankPath(bank)}/memories/dry-run-extract`, {}, 400, "content"],
        [
          "POST",
          `${bankPath(bank)}/memories/dry-run-extract`,
          { content: "x", retain_chunk_size: 1 },
          400,
          "retain_chunk_size"
        ],
        [
          "POST",
          `${bankPath(bank)}/memories/dry-run-extract`,
          { content: "x", retain_extraction_mode: "wild" },
          400,
          "retain_extraction_mode"
        ],
        ["POST", `${bankPath("no-such-bank")}/memories/dry-run-extract`, { content: "x" }, 404, undefined],
        ["GET", `${bankPath(bank)}/stats/memories-timeseries?period=2d`, undefined, 400, "period"],
        ["GET", `${bankPath(bank)}/stats/memories-timeseries?time_field=updated_at`, undefined, 400, "time_field"],
        ["GET", `${bankPath("no-such-bank")}/stats/memories-timeseries`, undefined, 404, undefined],
        ["GET", `${bankPath(bank)}/entities/graph?limit=0`, undefined, 400, "limit"],
        ["GET", `${bankPath(bank)}/entities/graph?min_count=0`, undefined, 400, "min_count"],
        ["GET", `${bankPath("no-such-bank")}/entities/graph`, undefined, 404, undefined],
        ["GET", `${bankPath("no-such-bank")}/observations/scopes`, undefined, 404, undefined]
      ]
      for (const [method, path, json, status, field] of cases) {
        const response = yield* call(method, path, json)
        assert.strictEqual(response.status, status, `${method} ${path} ${JSON.stringify(json)}: ${response.text}`)
        assert.isString(response.body.detail, `${method} ${path}`)
        if (field !== undefined) {
          assert.include(response.body.errors.map((e: any) => e.field), field, `${method} ${path}: ${response.text}`)
        }
      }
      assert.deepStrictEqual(yield* snapshot(bank), before)
    }))
})

layer(testApp({ enableObservations: true }), { excludeTestServices: true })("observation scopes", (it) => {
  it.effect("listObservationScopes lists each tag set observations live under, most populous first", () =>
    Effect.gen(function*() {
      const raw = yield* rawClient
      yield* ok("POST", `${bankPath("scopes")}/memories`, {
        items: [
          { content: "Dana prefers green tea in the morning.", tags: ["user:dana", "drinks"] },
          { content: "Dana drinks green tea with honey.", tags: ["drinks", "user:dana"] },
          { content: "The office closes at six on Fridays." }
        ]
      })
      yield* settled("scopes")
      const observations = yield* eventually(
        Effect.map(call("GET", `${bankPath("scopes")}/memories/list?type=observation&limit=100`), (r) => r.body.items),
        (items: Array<any>) => items.length > 0
      )
      const response = yield* promise(() => sdk.listObservationScopes({ client: raw, path: { bank_id: "scopes" } }))
      assert.strictEqual(response.response.status, 200)
      const scopes = response.data!.scopes
      assert.strictEqual(scopes.reduce((sum, scope) => sum + scope.count, 0), observations.length)
      for (const scope of scopes) assert.deepStrictEqual(scope.tags, [...scope.tags].sort())
      assert.deepStrictEqual(
        scopes.map((scope) => scope.count),
        scopes.map((scope) => scope.count).sort((a, b) => b - a)
      )
      assert.isTrue(scopes.some((scope) => JSON.stringify(scope.tags) === JSON.stringify(["drinks", "user:dana"])))
      // Observations are derived: they are not curated by hand.
      const refused = yield* call("PATCH", `${bankPath("scopes")}/memories/${observations[0].id}`, {
        state: "invalidated"
      })
      assert.strictEqual(refused.status, 400)
      assert.deepStrictEqual(refused.body.errors.map((e: any) => e.field), ["memory_id"])
    }))
})
