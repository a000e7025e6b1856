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
import { assertNothingLeft, assertOpinionsGone, withDerived, withOpinions } from "../../support/DerivedState.ts"
import { bankPath, ok, settled } from "../../support/HttpCalls.ts"
import { connectMcp } from "../../support/McpClient.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

const secret = "Zephyrine keeps the spare office key under the blue flowerpot."

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
