/**
 * Pruning the memory change log when several nodes share the database: two brains of one bank, built as two nodes
 * would (each with its own mark), over the real database tier. The log is pruned only below both brains' marks; a
 * node whose mark expired stops holding it back, and its brain, having missed pruned entries, rebuilds instead of
 * keeping memories that were deleted meanwhile.
 */
import { assert, layer } from "@effect/vitest"
import { Context, type Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BankBrains } from "../../src/brain/BankBrains.ts"
import { makeChangeLogMarks } from "../../src/brain/ChangeLogMarks.ts"
import { MemoryUnits } from "../../src/memory/MemoryUnits.ts"
import { testApp, TestServer } from "../support/TestServer.ts"
import { eventually as poll } from "../support/TestTasks.ts"

const bank = "shared-log"

/** A node's brains: a mark that lives `ttl` and is never renewed during the test. */
const node = (nodeId: string, ttl: Duration.Input) =>
  Layer.build(BankBrains.layerWith({ sharedChangeLog: { nodeId, markTimeToLive: ttl, renewEvery: "1 hour" } })).pipe(
    Effect.map((context) => Context.get(context, BankBrains))
  )

/**
 * Polls `read` (the marks and pruning run in the background) until `holds`; if it never does, fails naming what was
 * awaited and the last value read.
 */
const eventually = <A>(what: string, read: Effect.Effect<A, unknown>, holds: (value: A) => boolean) =>
  poll(read, holds, "20 seconds", { what, interval: "50 millis" })

layer(testApp(), { excludeTestServices: true })("memory change log on a shared database", (it) => {
  it.effect(
    "pruned below every live node's mark; a node whose mark expired rebuilds",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* TestServer
        const units = yield* MemoryUnits
        const sql = yield* SqlClient.SqlClient
        const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
          json: {
            items: [
              "Ana repotted the fig.",
              "Ben fixed the gate.",
              "Cai painted the shed.",
              "Dee pruned the roses.",
              "Eli cleaned the pond."
            ].map((content) => ({ content }))
          }
        })
        assert.strictEqual(retained.status, 200, retained.text)
        const ids = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} ORDER BY seq`).map((
          row
        ) => row.id)
        assert.isAtLeast(ids.length, 5)

        const log = sql<
          { seq: number }
        >`SELECT change_seq::float8 AS seq FROM memory_unit_changes WHERE bank_id = ${bank}
        ORDER BY change_seq`.pipe(Effect.map((rows) => rows.map((row) => row.seq)))
        const marks = sql<{ nodeId: string; changeMark: number }>`SELECT node_id, change_mark::float8 AS change_mark
        FROM brain_change_marks WHERE bank_id = ${bank} ORDER BY node_id`
        const markOf = (nodeId: string) =>
          Effect.map(marks, (rows) => rows.find((row) => row.nodeId === nodeId)?.changeMark)
        const idsIn = (brains: BankBrains["Service"]) =>
          Effect.map(brains.available(bank), (brain) => [...Option.getOrThrow(brain).graph.indexOf.keys()].sort())

        const a = yield* node("node-a", "1 hour")
        // Long enough for B to apply the first deletions on a loaded machine, short enough to wait out below.
        const b = yield* node("node-b", "5 seconds")
        yield* idsIn(a)
        yield* idsIn(b)
        yield* eventually("both marks recorded", marks, (rows) => rows.length === 2)

        // A applies two deletions; B has applied none, so the log keeps them.
        yield* units.remove(bank, ids[0]!)
        yield* units.remove(bank, ids[1]!)
        const [first, second] = yield* log
        assert.isDefined(second)
        yield* a.changed(bank)
        yield* idsIn(a)
        yield* eventually("A's mark at the second entry", markOf("node-a"), (mark) => mark === second)
        assert.deepStrictEqual(yield* log, [first!, second!], "entries B has not applied stay")

        // B applies them too: everything below both marks goes, the last entry stays.
        yield* b.changed(bank)
        yield* idsIn(b)
        yield* eventually("log pruned to the second entry", log, (entries) =>
          entries.length === 1 && entries[0] === second)

        // B stops renewing (a stalled or dead node). Once its mark expires, A prunes past it.
        yield* units.remove(bank, ids[2]!)
        yield* units.remove(bank, ids[3]!)
        yield* eventually(
          "B's mark expired",
          sql<{ live: boolean }>`SELECT expires_at > now() AS live FROM brain_change_marks WHERE node_id = 'node-b'`,
          (rows) =>
            rows.length === 1 && rows[0]!.live === false
        )
        const fourth = (yield* log).at(-1)!
        yield* a.changed(bank)
        yield* idsIn(a)
        yield* eventually("log pruned to the fourth entry", log, (entries) =>
          entries.length === 1 && entries[0] === fourth)

        // B missed the third deletion's entry: it rebuilds, and holds exactly what the tables hold. Readers keep the
        // old brain while a rebuild runs (it is never on a request's path), so the new one is awaited.
        const buildsBefore = (yield* b.state(bank)).stats.builds
        yield* b.changed(bank)
        const remaining = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank}`).map((row) =>
          row.id
        ).sort()
        yield* eventually("B rebuilt to what the tables hold", idsIn(b), (held) =>
          JSON.stringify(held) === JSON.stringify(remaining))
        assert.notInclude(yield* idsIn(b), ids[2]!)
        assert.strictEqual((yield* b.state(bank)).stats.builds, buildsBefore + 1, "B rebuilt")
        assert.deepStrictEqual(yield* idsIn(a), remaining)
      })),
    60_000
  )

  it.effect("a renewal that read the held brains before a brain loaded keeps that brain's new mark", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const server = yield* TestServer
      const created = yield* server.request("POST", "/v1/default/banks/renewed-bank/memories", {
        json: { items: [{ content: "Fay fed the cat." }] }
      })
      assert.strictEqual(created.status, 200, created.text)
      const marksOf = (bankId: string) =>
        sql<{ nodeId: string; live: boolean }>`
        SELECT node_id, expires_at > now() AS live FROM brain_change_marks WHERE bank_id = ${bankId} ORDER BY node_id`
      const node = makeChangeLogMarks(sql, { nodeId: "node-c", markTimeToLive: "1 hour" })
      const gone = makeChangeLogMarks(sql, { nodeId: "node-gone", markTimeToLive: "1 millis" })
      yield* gone.record("renewed-bank", 1)
      // The renewal read "no brain held", then a brain of the bank loaded and recorded its mark.
      yield* node.record("renewed-bank", 1)
      yield* Effect.sleep("20 millis")
      yield* node.renew([])
      assert.deepStrictEqual(
        yield* marksOf("renewed-bank"),
        [{ nodeId: "node-c", live: true }],
        "the expired mark went, the new one stayed"
      )
    }))
})
