/**
 * The ordinary delete paths reach everything derived, as forget and the sweeps do (one code path), over the real HTTP
 * server on both tiers: MCP `delete_memory` (a memory by id), `DELETE {bank}/documents/{id}` and
 * `DELETE {bank}/memories?type=` (a clear). After each, no opinion resting on the deleted memory (nor one resting on
 * that opinion) is returned by recall or by an offline reflect, and no dream run, prediction, anomaly, dataset set,
 * access event, mental model, chunk, document or kept `.brain` file holds it (`test/support/DerivedState.ts`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync } from "node:fs"
import { BrainRuntime } from "../../../src/brain/BrainRuntime.ts"
import { GraphRecall } from "../../../src/memory/recall/GraphRecall.ts"
import { assertNothingLeft, withDerived } from "../../support/DerivedState.ts"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const secret = "Zephyrine keeps the spare office key under the blue flowerpot."
const opinion = "Hiding the spare office key under a flowerpot is a careless habit."
const opinionOfOpinion = "Careless key habits like the flowerpot one deserve a reminder."
const question = "What about the spare office key under the flowerpot?"

/**
 * Two opinions, the way reflect stores them (`source_fact_ids`: what the answer cited): one resting on the memory,
 * one resting on that opinion. Each copies the memory's row (its embedding, so recall finds it) under a new id and
 * `seq`, and the brain is told, as the opinion writer tells it.
 */
const withOpinions = (bank: string, id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const first = crypto.randomUUID()
    const second = crypto.randomUUID()
    for (const [newId, text, source] of [[first, opinion, id], [second, opinionOfOpinion, first]] as const) {
      yield* sql`INSERT INTO memory_units
        SELECT r.* FROM memory_units u, LATERAL jsonb_populate_record(null::memory_units, to_jsonb(u) || jsonb_build_object(
          'id', ${newId}::text, 'seq', nextval(pg_get_serial_sequence('memory_units', 'seq')), 'fact_type', 'opinion',
          'text', ${text}::text, 'content_hash', ${newId}::text, 'source_fact_ids', jsonb_build_array(${source}::text),
          'document_id', null, 'chunk_id', null, 'confidence', 0.7)) r
        WHERE u.id = ${id}`
    }
    // A write tells the brain, as the opinion writer does.
    yield* (yield* GraphRecall).changed(bank)
    const recalled = yield* reads(bank)
    assert.include(recalled, "careless habit", "recall returns the opinion before the delete")
    assert.include(recalled, "deserve a reminder", "and the opinion resting on it")
    return [first, second]
  })

/** What recall (opinions asked for) and an offline reflect answer to the question, as one text. */
const reads = (bank: string) =>
  Effect.gen(function*() {
    const base = bankPath(bank)
    const recall = yield* ok("POST", `${base}/memories/recall`, {
      query: question,
      budget: "high",
      types: ["world", "experience", "opinion"]
    })
    const reflect = yield* ok("POST", `${base}/reflect`, { query: question, include: { facts: {} } })
    return recall.text + reflect.text
  })

const assertOpinionsGone = (bank: string, opinions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const left = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE id IN ${sql.in([...opinions])}`
    assert.deepStrictEqual(left, [], "the opinions resting on the memory (and on that opinion) are deleted")
    const after = yield* reads(bank)
    assert.notInclude(after, "careless habit", "neither recall nor reflect returns the opinion")
    assert.notInclude(after, "deserve a reminder", "nor the opinion resting on it")
    assert.notInclude(after, "flowerpot")
  })

layer(testApp(), { excludeTestServices: true, timeout: "4 minutes" })("deletes reach everything derived", (it) => {
  it.effect("a memory deleted by id (MCP delete_memory) goes with its opinions and everything derived", () =>
    Effect.gen(function*() {
      const bank = "deleted-by-id"
      const id = yield* withDerived(bank, secret, {})
      const opinions = yield* withOpinions(bank, id)
      const server = yield* TestServer
      const mcp = yield* connectMcp(`${server.url}/mcp/`, { "x-bank-id": bank })
      yield* mcp.ok("delete_memory", { memory_id: id })
      yield* settled(bank)
      // Removed rather than written again: writing it costs what the bank holds, and agents delete one at a time.
      const runtime = yield* BrainRuntime
      assert.isFalse(existsSync(runtime.filePath(bank)), "the delete removed the kept .brain file")
      yield* assertOpinionsGone(bank, opinions)
      yield* assertNothingLeft(bank, id)
    }))

  it.effect("a deleted document's memories go with their opinions and everything derived", () =>
    Effect.gen(function*() {
      const bank = "deleted-document"
      const id = yield* withDerived(bank, secret, {})
      const opinions = yield* withOpinions(bank, id)
      const deleted = yield* ok("DELETE", `${bankPath(bank)}/documents/${bank}-doc`)
      assert.strictEqual(deleted.body.memory_units_deleted, 1, "the document held the one memory")
      yield* settled(bank)
      yield* assertOpinionsGone(bank, opinions)
      yield* assertNothingLeft(bank, id)
    }))

  it.effect("clearing the memories of a type takes their opinions and everything derived", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const bank = "deleted-by-clear"
      const id = yield* withDerived(bank, secret, {})
      const opinions = yield* withOpinions(bank, id)
      const type = (yield* sql<{ factType: string }>`SELECT fact_type FROM memory_units WHERE id = ${id}`)[0]!.factType
      const lastingType = (yield* sql<{ factType: string }>`SELECT fact_type FROM memory_units
        WHERE bank_id = ${bank} AND text LIKE 'Marguerite%'`)[0]!.factType
      yield* ok("DELETE", `${bankPath(bank)}/memories?type=${type}`)
      yield* settled(bank)
      yield* assertOpinionsGone(bank, opinions)
      yield* assertNothingLeft(bank, id, { lastingGone: lastingType === type })
    }))
})
