/**
 * Many one-item retains at once into a bank whose brain is loaded: retains that wait share a transaction (a group),
 * and each group reads what it adds to the brain once, inside its own transaction, so the brain needs no read after
 * the commit — not one per retain of the group. Each retain is still in the brain when it is acknowledged. And a
 * group's duplicate check widens the HNSW search in the same statement, not in one of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, type Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeStatementLog } from "../../support/StatementLog.ts"
import { testApp, TestServer } from "../../support/TestServer.ts"

/**
 * Of the statements that read the change log for what a write added, whether each ran inside a transaction (once the
 * test knows how). The duplicate check reads where the log stands too (to lend the writer the brain's vectors), but
 * reads none of it.
 */
const changeLogReads: Array<boolean> = []
let inTransaction: ((fiber: Fiber.Fiber<unknown, unknown>) => boolean) | undefined
const isDuplicateCheck = (text: string) => /^\s*SELECT ARRAY\(\s*SELECT content_hash/.test(text)
const { count, layer: recordEveryStatement, ran } = makeStatementLog((text, fiber) => {
  if (
    inTransaction !== undefined && /memory_unit_changes/.test(text) && !/^DELETE/.test(text) && !isDuplicateCheck(text)
  ) {
    changeLogReads.push(inTransaction(fiber))
  }
})

const bank = "/v1/default/banks/grouped-brain"

layer(Layer.provide(testApp({ enableObservations: false }), recordEveryStatement), {
  excludeTestServices: true,
  timeout: "2 minutes"
})("one-item retains at once", (it) => {
  it.effect("each group applies its write to the brain from one read in its transaction; every retain is seen", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const seeded = yield* server.request("POST", `${bank}/memories`, {
        json: { items: [{ content: "The depot opened a second loading bay in March." }] }
      })
      assert.strictEqual(seeded.status, 200, seeded.text)
      // A recall loads the bank's brain.
      assert.strictEqual(
        (yield* server.request("POST", `${bank}/memories/recall`, { json: { query: "depot" } })).status,
        200
      )

      const sql = yield* SqlClient.SqlClient
      inTransaction = (fiber) => Context.getOption(fiber.context, sql.transactionService)._tag === "Some"
      const since = ran.length
      const shipments = Array.from({ length: 30 }, (_, n) => n)
      const answers = yield* Effect.forEach(
        shipments,
        (n) =>
          server.request("POST", `${bank}/memories`, {
            json: { items: [{ content: `Courier ${n} reported that parcel ${n} reached warehouse ${n}.` }] }
          }),
        { concurrency: "unbounded" }
      )
      for (const answer of answers) assert.strictEqual(answer.status, 200, answer.text)

      inTransaction = undefined
      const groups = count(since, /^INSERT INTO memory_units/)
      assert.isBelow(groups, shipments.length, "retains arriving together share a transaction")
      assert.deepStrictEqual(
        changeLogReads,
        Array.from({ length: groups }, () => true),
        "one read of what a group adds to the brain, in the group's transaction"
      )
      assert.strictEqual(count(since, /^SELECT set_config\('hnsw\.ef_search'/), 0)
      // Each group found its new facts' neighbours in the brain, which stood where the tables did.
      assert.strictEqual(
        count(since, /jsonb_to_recordset.*embedding vector\)\s+CROSS JOIN LATERAL/s),
        0,
        "no group searched the tables"
      )

      // Acknowledged means recalled: every parcel is found, from the brain (no statement reads memories).
      const before = ran.length
      for (const n of [0, 13, 29]) {
        const recall = yield* server.request("POST", `${bank}/memories/recall`, {
          json: { query: `parcel ${n} warehouse ${n}`, budget: "low" }
        })
        assert.strictEqual(recall.status, 200, recall.text)
        assert.isTrue(
          recall.body.results.some((result: any) => result.text.includes(`parcel ${n} `)),
          `parcel ${n} is recalled`
        )
      }
      assert.strictEqual(count(before, /FROM memory_units/), 0)
    }))
})
