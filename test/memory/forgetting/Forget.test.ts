/**
 * `POST {bank}/forget` over the real HTTP server on both database tiers. Forgetting an entity removes every memory
 * naming it and what was derived from it: after it no recall (brain and SQL), reflect, memory list, entity list,
 * graph view, mental model, dream, brain export (full copy) or MCP recall returns its content, while the bank's other
 * memories stay. A dry run reports exactly what the forget then removes and changes nothing; bad requests are 4xx
 * naming the field and change nothing; the audit trail records the forget without the forgotten name.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { forgetTuning } from "../../../src/memory/forgetting/Forget.ts"
import { Recall } from "../../../src/memory/recall/Recall.ts"
import { bankPath, call, ok, operationFinished, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const bank = "forgetful"
const base = bankPath(bank)
const name = "Zephyrine"
const about = [
  "Zephyrine Okafor keeps the spare office key under the blue flowerpot.",
  "Zephyrine Okafor moved to Lisbon in March to lead the design team.",
  "Zephyrine Okafor and Marguerite planned the Lisbon offsite together."
]
const others = [
  "Marguerite waters the office plants every Monday.",
  "Marguerite runs the weekly planning meeting on Tuesdays."
]

const exportText = Effect.gen(function*() {
  const server = yield* TestServer
  return yield* Effect.promise(async () => {
    const response = await fetch(`${server.url}${base}/brain/export?mode=full_copy`)
    return Buffer.from(await response.arrayBuffer()).toString("latin1")
  })
})

/** Everything the bank serves that could carry the name, as one text. */
const everything = Effect.gen(function*() {
  const recall = yield* Recall
  const texts: Array<string> = []
  for (
    const query of ["Where is the spare office key?", "Who moved to Lisbon?", "Zephyrine Okafor", "Lisbon offsite"]
  ) {
    texts.push(
      (yield* ok("POST", `${base}/memories/recall`, { query, budget: "high", include: { entities: {}, chunks: {} } }))
        .text
    )
    const asked = { query, budget: "high" as const, types: ["world", "experience", "observation"] as const }
    texts.push(
      JSON.stringify(yield* recall.recallWith(bank, { ...asked, types: [...asked.types] }, {}).pipe(Effect.orDie))
    )
    texts.push(
      JSON.stringify(
        yield* recall.recallWith(bank, { ...asked, types: [...asked.types] }, { source: "sql" }).pipe(Effect.orDie)
      )
    )
  }
  texts.push((yield* ok("POST", `${base}/reflect`, { query: "What do we know about Zephyrine Okafor?" })).text)
  texts.push((yield* ok("GET", `${base}/memories/list?limit=1000`)).text)
  texts.push((yield* ok("GET", `${base}/memories/list?limit=1000&type=observation`)).text)
  texts.push((yield* ok("GET", `${base}/entities?limit=1000`)).text)
  texts.push((yield* ok("GET", `${base}/graph`)).text)
  texts.push((yield* ok("GET", `${base}/mental-models`)).text)
  texts.push((yield* ok("GET", `${base}/dreams`)).text)
  texts.push(yield* exportText)
  return texts.join("\n")
})

/** What the bank stores, as its reads list it (no generated times, no model output). */
const stored = Effect.gen(function*() {
  const texts: Array<string> = []
  for (
    const path of [
      "memories/list?limit=1000",
      "memories/list?limit=1000&type=observation",
      "entities?limit=1000",
      "mental-models",
      "dreams",
      "documents"
    ]
  ) {
    texts.push((yield* ok("GET", `${base}/${path}`)).text)
  }
  return texts.join("\n")
})

layer(testApp({ enableObservations: true, mcpToolFamilies: ["forgetting"] }), {
  excludeTestServices: true,
  timeout: "3 minutes"
})("forget", (it) => {
  it.effect("forgetting an entity reaches everything derived; a dry run first reports exactly that and changes nothing", () =>
    Effect.gen(function*() {
      yield* ok("PUT", base, { dream: { enabled: true } })
      yield* ok("POST", `${base}/memories`, {
        items: [
          ...about.map((content) => ({ content, entities: [{ text: "Zephyrine Okafor" }] })),
          ...others.map((content) => ({ content }))
        ]
      })
      yield* settled(bank)
      yield* ok("POST", `${base}/mental-models`, {
        id: "keys",
        name: "Keys",
        source_query: "Where is the spare office key?"
      })
      yield* settled(bank)
      const dreamed = yield* ok("POST", `${base}/dreams/trigger`, { trigger_source: "manual", run_type: "dream" })
      yield* operationFinished(bank, dreamed.body.operation_id)
      yield* settled(bank)
      const before = yield* everything
      assert.include(before, name, "the bank serves the entity before the forget")
      assert.include(yield* exportText, "flowerpot", "a full-copy brain export holds the memory before the forget")

      // Bad requests: 4xx naming the field, nothing changed.
      for (
        const [body, field] of [
          [{}, "body"],
          [{ entity: "" }, "entity"],
          [{ memory_ids: "all" }, "memory_ids"],
          [{ entity: name, purge_history: "yes" }, "purge_history"]
        ] as const
      ) {
        const refused = yield* call("POST", `${base}/forget`, body)
        assert.strictEqual(refused.status, 400, refused.text)
        assert.include(refused.text, field)
      }
      assert.strictEqual((yield* call("POST", `${bankPath("no-such-bank")}/forget`, { entity: name })).status, 404)

      const listBefore = (yield* ok("GET", `${base}/memories/list?limit=1000`)).body
      const storedBefore = yield* stored
      const dry = (yield* ok("POST", `${base}/forget`, { entity: "zephyrine okafor", dry_run: true })).body
      assert.isTrue(dry.dry_run)
      assert.isAtLeast(dry.removed.memories, about.length)
      assert.isAtLeast(dry.removed.entities, 1)
      assert.deepStrictEqual(
        (yield* ok("GET", `${base}/memories/list?limit=1000`)).body,
        listBefore,
        "a dry run changes nothing"
      )
      assert.strictEqual(yield* stored, storedBefore)

      const report = (yield* ok("POST", `${base}/forget`, { entity: "zephyrine okafor" })).body
      assert.isFalse(report.dry_run)
      assert.deepStrictEqual(report.memory_ids, dry.memory_ids)
      assert.deepStrictEqual(report.removed, dry.removed)
      assert.isFalse(report.repo_commits.rewritten)
      assert.notInclude(JSON.stringify(report), name)
      yield* settled(bank)

      const after = yield* everything
      const at = after.indexOf(name)
      assert.strictEqual(at, -1, after.slice(Math.max(0, at - 600), at + 200))
      assert.notInclude(after, "flowerpot")
      for (const kept of others) assert.include((yield* ok("GET", `${base}/memories/list?limit=1000`)).text, kept)
      const mental = yield* ok("GET", `${base}/mental-models/keys`)
      assert.notInclude(mental.text, name)

      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
      const recalled = yield* mcp.ok("recall", { query: "Where is the spare office key?" })
      assert.notInclude(JSON.stringify(recalled), name)
      assert.include(JSON.stringify(yield* mcp.ok("recall", { query: "Who waters the office plants?" })), "Marguerite")

      // Audited (the dry run and the refusals too), without the name it forgot.
      const audit = yield* ok("GET", `${base}/audit-logs?action=forgetting.forget`)
      assert.deepStrictEqual(audit.body.items.map((item: any) => item.response.status), [200, 200, 400, 400, 400, 400])
      assert.notInclude(audit.text, name)
    }))

  it.effect("forgetting by ids, document and tag removes exactly those memories and says so", () =>
    Effect.gen(function*() {
      const other = bankPath("forget-selectors")
      yield* ok("POST", `${other}/memories`, {
        items: [
          { content: "The boiler was serviced in January.", document_id: "maintenance" },
          { content: "The roof was repaired in May.", tags: ["building"] },
          { content: "The lift inspection is due in June." },
          { content: "The garden hose is in the shed." }
        ]
      })
      const listed = (yield* ok("GET", `${other}/memories/list?limit=100`)).body.items as Array<any>
      const lift = listed.find((item) => item.text.includes("lift")).id
      const report =
        (yield* ok("POST", `${other}/forget`, { memory_ids: [lift], document_id: "maintenance", tag: "building" })).body
      assert.strictEqual(report.removed.memories, 3)
      assert.strictEqual(report.removed.documents, 1)
      const left = (yield* ok("GET", `${other}/memories/list?limit=100`)).text
      for (const gone of ["boiler", "roof", "lift"]) assert.notInclude(left, gone)
      assert.include(left, "garden hose")
      assert.strictEqual((yield* call("GET", `${other}/documents/maintenance`)).status, 404)

      // The MCP tool answers the same report: a dry run that keeps the memory, then the forget.
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": "forget-selectors" })
      const remaining = (yield* ok("GET", `${other}/memories/list?limit=100`)).body
      const hose = remaining.items[0].id
      const dry = yield* mcp.ok("forget", { memory_ids: [hose], dry_run: true })
      assert.deepStrictEqual([dry.dry_run, dry.memory_ids], [true, [hose]])
      assert.strictEqual((yield* ok("GET", `${other}/memories/list?limit=100`)).body.total, remaining.total)
      assert.include(yield* mcp.fails("forget", {}), "entity, memory_ids, document_id or tag")
      const forgotten = yield* mcp.ok("forget", { memory_ids: [hose] })
      assert.strictEqual(forgotten.removed.memories, 1)
      assert.strictEqual((yield* ok("GET", `${other}/memories/list?limit=100`)).body.total, remaining.total - 1)
    }))

  it.effect("a large forget runs in slices and ends as a forget in one transaction does", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const banks = ["forget-sliced", "forget-whole"]
      const items = [
        ...Array.from({ length: 16 }, (_, i) => ({
          content: `Quillon Marsh logged tide reading ${i} at the north buoy on day ${i + 1}.`,
          entities: [{ text: "Quillon Marsh" }]
        })),
        ...Array.from({ length: 6 }, (_, i) => ({ content: `The harbour crane ${i} was painted yellow in spring.` }))
      ]
      for (const id of banks) {
        yield* ok("POST", `${bankPath(id)}/memories`, { items })
        yield* settled(id)
      }
      const txid = sql<{ t: string }>`SELECT txid_current()::text AS t`.pipe(
        Effect.orDie,
        Effect.map((rows) => Number(rows[0]!.t))
      )
      const saved = { ...forgetTuning }
      yield* Effect.addFinalizer(() => Effect.sync(() => Object.assign(forgetTuning, saved)))

      // Slices of 2 memories: the 16 go in 8 transactions before the last one (one transaction alone takes 3 ids here).
      Object.assign(forgetTuning, { sliceAbove: 4, sliceMemories: 2 })
      const before = yield* txid
      const sliced = (yield* ok("POST", `${bankPath(banks[0]!)}/forget`, { entity: "Quillon Marsh" })).body
      const transactions = (yield* txid) - before - 1
      assert.isAtLeast(transactions, 8, "the forget's slices committed one by one")
      // Each slice is audited as it commits (a crash between slices leaves their record), with counts, never content.
      const audited = (bankId: string) =>
        Effect.orDie(sql<{ route: string }>`SELECT route FROM audit_logs
        WHERE bank_id = ${bankId} AND action = 'memories.forget_slice' ORDER BY started_at`)
      const sliceEntries = yield* audited(banks[0]!)
      assert.isAtLeast(sliceEntries.length, 8, JSON.stringify(sliceEntries))
      for (const entry of sliceEntries) {
        assert.match(entry.route, /^forget in slices: \d+ memories deleted/)
        assert.notInclude(entry.route, "Quillon")
      }

      Object.assign(forgetTuning, saved)
      const whole = (yield* ok("POST", `${bankPath(banks[1]!)}/forget`, { entity: "Quillon Marsh" })).body
      assert.deepStrictEqual(yield* audited(banks[1]!), [], "a forget in one transaction has only its request's entry")

      // The facts go by both ways, and so does the observation built on them: in one transaction it is selected by
      // its text and counted with the memories; a slice deleting its facts first releases it, counted as such.
      const counts = (report: any) => ({
        memoriesAndObservations: report.removed.memories + report.removed.observations,
        entities: report.removed.entities,
        chunks: report.removed.chunks
      })
      assert.isAtLeast(sliced.memory_ids.length, 16, JSON.stringify(sliced))
      assert.deepStrictEqual(counts(sliced), counts(whole))
      const left = yield* Effect.forEach(banks, (id) =>
        Effect.map(ok("GET", `${bankPath(id)}/memories/list?limit=100`), (page) =>
          page.body.items.map((item: { text: string }) =>
            item.text
          ).sort()))
      assert.deepStrictEqual(left[0], left[1])
      for (let i = 0; i < 6; i++) assert.include(left[0], `The harbour crane ${i} was painted yellow in spring.`)
      assert.notInclude(left[0]!.join("\n"), "Quillon")
      for (const id of banks) {
        assert.notInclude((yield* ok("GET", `${bankPath(id)}/entities?limit=100`)).text, "Quillon")
        const recalled = yield* ok("POST", `${bankPath(id)}/memories/recall`, { query: "Quillon Marsh tide reading" })
        assert.notInclude(recalled.text, "Quillon")
      }
    }))
})
