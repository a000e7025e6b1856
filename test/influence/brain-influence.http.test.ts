/**
 * Access telemetry and influence analytics over HTTP: recalls, reflects and mental-model reads reach the telemetry
 * table in the background (a recall runs no telemetry statement of its own), with the rerank scores recall gave;
 * the influence leaderboard ranks first the memory recalled most that is also the hub of the bank's graph, with a
 * graph factor that is PageRank on the bank's graph (the hub 1, every leaf less); the heatmap, trend and
 * anomalies follow the reads' times; bad parameters are refused naming the field.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { SqlClient, Statement } from "effect/sql"
import { eventually } from "../support/TestTasks.ts"
import { freshDatabaseSettings, testApp, TestServer } from "../support/TestServer.ts"

const bank = "influence"
const base = `/v1/default/banks/${bank}`
const probeHeader = "x-statement-probe"

/** Statements run on behalf of each probed request, by the value of its probe header. */
const recorded = new Map<string, Array<string>>()

const recordStatements = Layer.succeed(Statement.CurrentTransformer, (statement, _sql, fiber) => {
  const request = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)
  const probe = Option.isSome(request) ? request.value.headers[probeHeader] : undefined
  if (probe !== undefined) recorded.set(probe, [...(recorded.get(probe) ?? []), statement.compile()[0]])
  return Effect.succeed(statement)
})

/** The hub names every person; each other fact names one of them. */
const hub = "Alice, Bob, Carla, Dmitri and Eva met at the harbour in Lisbon to plan the regatta."
const leaves = [
  "Alice planted tomatoes in the community garden.",
  "Bob repaired an old bicycle for his nephew.",
  "Carla painted the fence of her cottage blue.",
  "Dmitri baked rye bread for the winter market.",
  "Eva sang in the choir at the cathedral."
]

const request = (method: string, path: string, json?: unknown, headers?: Record<string, string>) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    return yield* server.request(method, path, {
      ...(json === undefined ? {} : { json }),
      ...(headers ? { headers } : {})
    })
  })

/** A small token budget keeps a recall to its best memory or two, so what is recalled often differs. */
const pathOf = (bank: string) => `/v1/default/banks/${bank}`

const recall = (bank: string, query: string, headers?: Record<string, string>) =>
  Effect.gen(function*() {
    const response = yield* request(
      "POST",
      `${pathOf(bank)}/memories/recall`,
      { query, budget: "low", max_tokens: 40 },
      headers
    )
    assert.strictEqual(response.status, 200, response.text)
    return response.body.results as ReadonlyArray<{ id: string; text: string; score: number }>
  })

const accessRows = (bank: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ accessId: string; source: string; itemType: string; itemId: string; score: number | null }>`
    SELECT access_id, source, item_type, item_id, score FROM memory_access_events WHERE bank_id = ${bank}
    ORDER BY seq`.pipe(Effect.orDie)
  })

const influence = (bank: string, query = "") => request("GET", `${pathOf(bank)}/brain/influence${query}`)

const idOf = (bank: string, text: string) =>
  Effect.gen(function*() {
    const listed = yield* request("GET", `${pathOf(bank)}/memories/list?limit=100`)
    const found = listed.body.items.find((item: any) => item.text.includes(text.slice(0, 30)))
    assert.isDefined(found, `no memory like "${text}" in ${listed.text}`)
    return found.id as string
  })

/** The hub and its leaves in a bank of the test's own: reads accumulate, so no test shares a bank with another. */
const seeded = (bank: string) =>
  Effect.gen(function*() {
    assert.strictEqual((yield* request("PUT", pathOf(bank), {})).status, 200)
    const items = [hub, ...leaves].map((content, i) => ({ content, timestamp: `2024-05-0${i + 1}T10:00:00Z` }))
    const retained = yield* request("POST", `${pathOf(bank)}/memories`, { items })
    assert.strictEqual(retained.status, 200, retained.text)
    return pathOf(bank)
  })

/** A mental model of the bank, read once. */
const readMentalModel = (bank: string) =>
  Effect.gen(function*() {
    const created = yield* request("POST", `${pathOf(bank)}/mental-models`, {
      name: "Harbour plans",
      source_query: "What happens at the harbour?"
    })
    assert.strictEqual(created.status, 200, created.text)
    const modelId = created.body.mental_model_id ?? created.body.id
    assert.isString(modelId, created.text)
    assert.strictEqual((yield* request("GET", `${pathOf(bank)}/mental-models/${modelId}`)).status, 200)
    return modelId as string
  })

layer(Layer.provide(testApp(), recordStatements), { excludeTestServices: true, timeout: "2 minutes" })(
  "brain influence",
  (it) => {
    it.effect("a recall's returned memories and scores reach the telemetry table in the background", () =>
      Effect.gen(function*() {
        const bank = "influence-recall"
        const base = yield* seeded(bank)

        const results = yield* recall(bank, "harbour regatta Lisbon", { [probeHeader]: "recall-1" })
        assert.isAbove(results.length, 0)
        const statements = recorded.get("recall-1") ?? []
        assert.isAbove(statements.length, 0, "the probe sees the recall's statements")
        assert.isFalse(
          statements.some((s) => s.includes("memory_access_events") || s.includes("access_count")),
          statements.join("\n---\n")
        )

        const rows = yield* eventually(accessRows(bank), (rows) => rows.length >= results.length)
        assert.strictEqual(rows.length, results.length)
        assert.strictEqual(new Set(rows.map((row) => row.accessId)).size, 1, "one access per read")
        for (const result of results) {
          const row = rows.find((r) => r.itemId === result.id)
          assert.isDefined(row)
          assert.strictEqual(row!.source, "recall")
          assert.strictEqual(row!.itemType, "memory")
          assert.closeTo(row!.score!, result.score, 1e-4)
        }
        // The memories' own counters follow: the graph view shows them.
        const graph = yield* request("GET", `${base}/graph?limit=100`)
        const counted = graph.body.nodes.find((node: any) => node.id === results[0]!.id)
        assert.strictEqual(counted.access_count, 1)
      }))

    it.effect("reflect and mental-model reads are recorded with their source", () =>
      Effect.gen(function*() {
        const bank = "influence-reads"
        const base = yield* seeded(bank)
        const modelId = yield* readMentalModel(bank)
        const recallsBefore = (yield* accessRows(bank)).filter((r) => r.source === "recall").length
        const reflected = yield* request("POST", `${base}/reflect`, { query: "Who met at the harbour?" })
        assert.strictEqual(reflected.status, 200, reflected.text)
        const rows = yield* eventually(
          accessRows(bank),
          (rows) => rows.some((r) => r.source === "mental_model") && rows.some((r) => r.source === "reflect")
        )
        const read = rows.find((r) => r.source === "mental_model")!
        assert.strictEqual(read.itemType, "mental_model")
        assert.strictEqual(read.itemId, modelId)
        // The reflect's own searches are recorded as the reflect's reads, with their rerank scores, not as recalls.
        assert.isTrue(rows.some((r) => r.source === "reflect" && r.itemType === "memory" && r.score !== null))
        assert.strictEqual(rows.filter((r) => r.source === "recall").length, recallsBefore)
      }))

    it.effect("the hub recalled most ranks first; the graph factor is PageRank, not a rank position", () =>
      Effect.gen(function*() {
        const bank = "influence-hub"
        yield* seeded(bank)
        yield* readMentalModel(bank)
        const hubId = yield* idOf(bank, hub)
        for (let i = 0; i < 6; i++) {
          const results = yield* recall(bank, "harbour regatta Lisbon")
          assert.strictEqual(results[0]!.id, hubId, "the query finds the hub first")
        }
        const gardenId = yield* idOf(bank, leaves[0]!)
        yield* recall(bank, "tomatoes community garden")

        const response = yield* influence(bank, "?window_days=7&top_k=20")
        assert.strictEqual(response.status, 200, response.text)
        const board = response.body.leaderboard as ReadonlyArray<any>
        assert.strictEqual(board[0].id, hubId, response.text)
        assert.isAtLeast(board[0].access_count, 6)
        assert.closeTo(board[0].contribution.graph, 0.18, 1e-6, "the hub is the most central memory")
        assert.isAbove(board[0].contribution.rerank, 0, "recalls scored it")
        assert.strictEqual(board[0].contribution.dream, 0)
        const parts = board[0].contribution
        assert.closeTo(
          board[0].influence_score,
          parts.recency + parts.freq + parts.graph + parts.rerank + parts.dream,
          1e-5
        )
        const scores = board.map((row) => row.influence_score)
        assert.deepStrictEqual(scores, [...scores].sort((a, b) => b - a))

        // Every leaf is in the leaderboard through its graph centrality, recalled or not, with a graph factor
        // below the hub's that does not follow its position.
        for (const text of leaves) {
          const id = yield* idOf(bank, text)
          const row = board.find((r) => r.id === id)
          assert.isDefined(row, text)
          assert.isAbove(row.contribution.graph, 0)
          assert.isBelow(row.contribution.graph, 0.18)
        }
        const garden = board.find((r) => r.id === gardenId)
        assert.isAtLeast(garden.access_count, 1)
        assert.isAbove(garden.contribution.freq, 0)
        assert.isTrue(
          board.every((r) => r.access_count <= board[0].access_count),
          "nothing was read more often than the hub"
        )
        // A rank-position proxy would fall with the position; PageRank does not.
        const graphs = board.filter((r) => r.type !== "mental_model").map((r) => r.contribution.graph)
        assert.isTrue(graphs.some((g, i) => i > 0 && g > graphs[i - 1]!), JSON.stringify(graphs))

        const memoriesOnly = yield* influence(bank, "?entity_type=memory&top_k=3")
        assert.strictEqual(memoriesOnly.body.leaderboard.length, 3)
        assert.isTrue(memoriesOnly.body.leaderboard.every((r: any) => r.type !== "mental_model" && r.type !== "chunk"))
        const models = yield* influence(bank, "?entity_type=mental_model")
        assert.isTrue(models.body.leaderboard.every((r: any) => r.type === "mental_model"))
        assert.isAbove(models.body.leaderboard.length, 0)
        assert.strictEqual(models.body.leaderboard[0].contribution.graph, 0)
      }))

    it.effect("the heatmap, trend and anomalies follow the reads' times", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const bank = "influence-times"
        yield* seeded(bank)
        const hubId = yield* idOf(bank, hub)
        const now = new Date()
        // Thirty reads three days ago at 05:00 UTC: a spike on one day, and the busiest heatmap cell.
        const spike = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 3, 5, 0))
        for (let i = 0; i < 30; i++) {
          yield* sql`INSERT INTO memory_access_events (bank_id, access_id, source, item_type, item_id, score, accessed_at)
          VALUES (${bank}, ${`spike-${i}`}, 'recall', 'memory', ${hubId}, 0.9, ${spike})`.pipe(Effect.orDie)
        }
        const response = yield* influence(bank, "?window_days=14")
        assert.strictEqual(response.status, 200, response.text)
        const body = response.body
        assert.strictEqual(body.window_days, 14)
        assert.strictEqual(body.heatmap.length, 168)
        const weekday = (spike.getUTCDay() + 6) % 7
        const cell = body.heatmap.find((p: any) => p.weekday === weekday && p.hour_utc === 5)
        assert.strictEqual(cell.count, 30)
        assert.strictEqual(cell.score, 1, "the busiest cell")
        const total = body.heatmap.reduce((sum: number, p: any) => sum + p.count, 0)
        assert.strictEqual(total, body.summary.access_events)

        assert.strictEqual(body.trend.length, 14)
        const spikeDay = spike.toISOString().slice(0, 10)
        const point = body.trend.find((p: any) => p.day === spikeDay)
        assert.strictEqual(point.raw, 1)
        assert.strictEqual(body.trend[0].ewma, body.trend[0].raw)
        for (const p of body.trend) assert.isTrue(p.lower <= p.upper && p.lower >= 0 && p.upper <= 1, JSON.stringify(p))
        assert.isTrue(body.anomalies.some((a: any) => a.day === spikeDay && a.iqr), JSON.stringify(body.anomalies))

        const narrow = yield* influence(bank, "?window_days=1")
        assert.strictEqual(narrow.body.trend.length, 1)
        assert.isFalse(narrow.body.heatmap.some((p: any) => p.weekday === weekday && p.hour_utc === 5 && p.count > 0))
      }))

    it.effect("a dream run's evidence earns its memories the dream factor; the summary counts the run", () =>
      Effect.gen(function*() {
        const bank = "influence-dream"
        const base = yield* seeded(bank)
        const before = yield* influence(bank, "?window_days=7&top_k=50")
        assert.strictEqual(before.body.summary.dream_runs, 0)
        const enabled = yield* request("PATCH", `${base}/config`, {
          dream: { enabled: true, min_recall_results: 1, quality_threshold: 0.3 }
        })
        assert.strictEqual(enabled.status, 200, enabled.text)
        const queued = yield* request("POST", `${base}/dreams/trigger`, { trigger_source: "manual", run_type: "dream" })
        assert.strictEqual(queued.status, 200, queued.text)
        yield* eventually(
          Effect.map(request("GET", `${base}/operations/${queued.body.operation_id}`), (r) => r.body.status),
          (status) => status === "completed" || status === "failed"
        )
        const run = (yield* request("GET", `${base}/dreams?limit=1`)).body.items[0]
        const evidence: ReadonlyArray<string> = run.evidence_basis.recall_memory_ids
        assert.isAbove(evidence.length, 0, JSON.stringify(run))

        const after = yield* influence(bank, "?window_days=7&top_k=50")
        assert.strictEqual(after.body.summary.dream_runs, 1, after.text)
        const dreamt = (after.body.leaderboard as ReadonlyArray<any>).filter((row) => row.contribution.dream > 0)
        assert.isAbove(dreamt.length, 0, after.text)
        assert.isTrue(dreamt.every((row) => evidence.includes(row.id)), "only the run's evidence earns the factor")
        assert.closeTo(
          Math.max(...dreamt.map((row) => row.contribution.dream)),
          0.14,
          1e-6,
          "the strongest has all of it"
        )
      }))

    it.effect("bad parameters are refused naming the field; an unknown bank is 404", () =>
      Effect.gen(function*() {
        const bank = "influence-refusals"
        yield* seeded(bank)
        for (
          const [query, field] of [
            ["window_days=0", "window_days"],
            ["window_days=91", "window_days"],
            ["top_k=0", "top_k"],
            ["top_k=many", "top_k"],
            ["entity_type=person", "entity_type"]
          ]
        ) {
          const response = yield* influence(bank, `?${query}`)
          assert.strictEqual(response.status, 400, `${query}: ${response.text}`)
          assert.include(response.body.detail, field)
        }
        const missing = yield* request("GET", "/v1/default/banks/nobody/brain/influence")
        assert.strictEqual(missing.status, 404, missing.text)
      }))
  }
)

layer(Layer.empty, { excludeTestServices: true, timeout: "2 minutes" })("access telemetry at shutdown", (it) => {
  it.effect("what is buffered is written when the service stops, and accesses past the retention are pruned", () =>
    Effect.gen(function*() {
      const database = freshDatabaseSettings()
      const ancient = new Date(Date.now() - 120 * 86_400_000)
      let returned: ReadonlyArray<string> = []
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(testApp(database))
        const server = Context.get(context, TestServer)
        const sql = Context.get(context, SqlClient.SqlClient)
        assert.strictEqual((yield* server.request("PUT", base, { json: {} })).status, 200)
        yield* server.request("POST", `${base}/memories`, {
          json: { items: [{ content: hub }, { content: leaves[0] }] }
        })
        yield* sql`INSERT INTO memory_access_events (bank_id, access_id, source, item_type, item_id, score, accessed_at)
          VALUES (${bank}, 'ancient', 'recall', 'memory', 'gone', 0.5, ${ancient})`.pipe(Effect.orDie)
        const recalled = yield* server.request("POST", `${base}/memories/recall`, {
          json: { query: "harbour regatta" }
        })
        returned = recalled.body.results.map((r: any) => r.id)
        assert.isAbove(returned.length, 0)
        // The writer waits a second before writing: the service stops before then.
      }))
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(testApp(database))
        const sql = Context.get(context, SqlClient.SqlClient)
        const rows = yield* sql<
          { itemId: string; accessId: string }
        >`SELECT item_id, access_id FROM memory_access_events
          WHERE bank_id = ${bank}`.pipe(Effect.orDie)
        assert.sameMembers(rows.map((r) => r.itemId), [...returned])
        assert.isFalse(rows.some((r) => r.accessId === "ancient"), "older than 90 days: pruned")
      }))
    }))
})
