/**
 * The bank's brain kept current by deltas against a brain freshly built from the same tables, on the real database
 * tier: after any random sequence of retains, document replacements, document deletions and memory deletions, the
 * incrementally maintained graph and keyword index answer exactly as a fresh build, and so does recall.
 */
import { assert, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Option } from "effect"
import * as fc from "fast-check"
import { SqlClient, Statement } from "effect/sql"
import type { Brain, WriteDelta } from "../../src/brain/BankBrains.ts"
import { BankBrains } from "../../src/brain/BankBrains.ts"
import { Foreground } from "../../src/bank/Foreground.ts"
import { MemoryUnits } from "../../src/memory/MemoryUnits.ts"
import { Retain } from "../../src/memory/retain/Retain.ts"
import { spread } from "../../src/brain/graph/SpreadingActivation.ts"
import { graphSpreadOptions } from "../../src/memory/recall/GraphRecall.ts"
import { eventually } from "../support/Eventually.ts"
import { testApp, TestServer } from "../support/TestServer.ts"

const sentences = [
  "Caroline went to the LGBTQ support group on Tuesday.",
  "Melanie painted a sunrise over the lake.",
  "Caroline is researching adoption agencies.",
  "Melanie took her kids camping near the lake.",
  "Jon opened a dance studio downtown.",
  "Gina lost her job and started an online store.",
  "Jon and Gina love dancing together.",
  "Caroline wants to become a counselor.",
  "Melanie signed up for a pottery class.",
  "The dance studio hosts a competition in June."
]
const queries = ["Caroline support group", "Melanie lake painting", "dance studio Jon", "pottery class", "adoption"]
const keywordTerms = [["caroline"], ["lake", "paint"], ["danc", "studio"], ["job", "store"]]

type Operation =
  | { readonly kind: "retain"; readonly picks: ReadonlyArray<number>; readonly document: number | null }
  | { readonly kind: "delete-memory"; readonly pick: number }
  | { readonly kind: "delete-document"; readonly document: number }

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("retain" as const),
      picks: fc.array(fc.nat({ max: sentences.length - 1 }), { minLength: 1, maxLength: 3 }),
      document: fc.option(fc.nat({ max: 2 }), { nil: null })
    })
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete-memory" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete-document" as const), document: fc.nat({ max: 2 }) }) }
)

/** What a brain answers, by memory id, so two brains with different positions compare. */
const answers = (brain: Brain) => {
  const graph = brain.graph
  const ids = [...graph.indexOf.keys()].sort()
  const neighbours = ids.map((id) => {
    const index = graph.indexOf.get(id)!
    const around = ([-1, 1] as const).map((step) => graph.adjacentInOrder(index, step))
    return [id, around.map((at) => (at < 0 ? null : graph.ids[at]))]
  })
  const spreads = ids.slice(0, 6).map((id) => {
    const result = spread(graph, [{ index: graph.indexOf.get(id)!, activation: 1 }], graphSpreadOptions)
    return Array.from(result.indices, (index, k) => [graph.ids[index], result.activations[k], result.hops[k]])
  })
  const keyword = keywordTerms.map((terms) =>
    brain.keywords.search(terms.map((lexeme) => ({ lexeme, boost: 1 })), { types: ["world", "experience"], depth: 10 })
  )
  // The records hold exactly the live memories, each as SQL reads it, and search them alike.
  const records = brain.records
  const rows = ids.map((id) => records.row(id))
  const scope = { types: ["world", "experience", "observation"] }
  const probe = (ids.length > 0 ? records.vectorOf(ids[0]!) : undefined) ??
    new Float32Array(records.vectors.dimensions).fill(0.1)
  const nearest = records.nearest(Float32Array.from(probe), scope, 8)
  const recent = records.inWindow({ start: Date.UTC(2023, 0, 1), end: Date.UTC(2030, 0, 1) }, scope, 8)
  return { ids, neighbours, spreads, keyword, size: records.size, rows, nearest, recent }
}

/** The bank's brain, which these tests expect to be there (its breaker stays closed). */
const current = (bankId: string) =>
  Effect.gen(function*() {
    const brains = yield* BankBrains
    return Option.getOrThrow(yield* brains.available(bankId))
  })

/** A brain built from scratch, read from the tables in pages of a few rows (a large bank's build reads many). */
const fresh = (bankId: string) =>
  Effect.gen(function*() {
    return yield* current(bankId)
  }).pipe(Effect.provide(BankBrains.layerWith({ pageRows: { memories: 3, links: 4 } })))

/**
 * The statements an application of a write runs in its own fiber: the catch-up's reads. Pruning the log it has
 * applied is a write of its own, in the background, and not counted.
 */
const readsOf = <A, E, R>(apply: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const reads: Array<string> = []
    yield* apply.pipe(
      Effect.provideService(Statement.CurrentTransformer, (statement) => {
        const [text] = statement.compile()
        if (!text.includes("DELETE FROM memory_unit_changes")) reads.push(text)
        return Effect.succeed(statement)
      })
    )
    return reads
  })

let bankNumber = 0

/** A bank of the first `count` sentences, retained over HTTP, and its memories' ids in retain order. */
const seeded = (prefix: string, count: number) =>
  Effect.gen(function*() {
    const server = yield* TestServer
    const sql = yield* SqlClient.SqlClient
    const bank = `${prefix}-${bankNumber++}`
    const retained = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
      json: { items: sentences.slice(0, count).map((content) => ({ content })) }
    })
    assert.strictEqual(retained.status, 200, retained.text)
    const ids = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} ORDER BY seq`)
      .map((row) => row.id)
    return { bank, ids }
  })

layer(testApp(), { excludeTestServices: true })("bank brain", (it) => {
  it.effect(
    "kept current by deltas, answers exactly as a fresh build after any sequence of writes",
    () =>
      Effect.gen(function*() {
        const server = yield* TestServer
        const brains = yield* BankBrains
        const units = yield* MemoryUnits
        const sql = yield* SqlClient.SqlClient
        const context = yield* Effect.context<SqlClient.SqlClient | Foreground>()

        const scenario = (ops: ReadonlyArray<Operation>) =>
          Effect.gen(function*() {
            const bank = `brain-${bankNumber++}`
            const base = `/v1/default/banks/${bank}`
            const seeded = yield* server.request("POST", `${base}/memories`, {
              json: { items: sentences.slice(0, 4).map((content) => ({ content })) }
            })
            assert.strictEqual(seeded.status, 200, seeded.text)
            // Built now, so every later write reaches it as a delta.
            yield* current(bank)
            let turn = 0
            for (const op of ops) {
              if (op.kind === "retain") {
                const items = op.picks.map((pick) => ({
                  content: `${sentences[pick]} (turn ${turn++})`,
                  timestamp: new Date(Date.UTC(2024, 0, 1, 0, turn)).toISOString(),
                  ...(op.document === null ? {} : { document_id: `doc-${op.document}` })
                }))
                const retained = yield* server.request("POST", `${base}/memories`, { json: { items } })
                assert.strictEqual(retained.status, 200, retained.text)
              } else if (op.kind === "delete-memory") {
                const ids = yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} ORDER BY seq`
                if (ids.length > 0) yield* units.remove(bank, ids[op.pick % ids.length]!.id)
              } else {
                const deleted = yield* server.request("DELETE", `${base}/documents/doc-${op.document}`)
                assert.oneOf(deleted.status, [200, 404], deleted.text)
              }
              const kept = answers(yield* current(bank))
              const rebuilt = answers(yield* fresh(bank))
              for (const key of Object.keys(kept) as Array<keyof typeof kept>) {
                assert.deepStrictEqual(kept[key], rebuilt[key], `${key} after ${JSON.stringify(op)}`)
              }
            }
            // The whole recall, incremental brain first, then rebuilt from scratch.
            const recalls = () =>
              Effect.forEach(queries, (query) =>
                server.request("POST", `${base}/memories/recall`, { json: { query, budget: "mid", trace: true } }).pipe(
                  Effect.map((response) => ({
                    results: response.body.results.map((r: { id: string; score: number }) => [r.id, r.score]),
                    graph: response.body.trace.strategies.graph.candidates,
                    keyword: response.body.trace.strategies.keyword.candidates
                  }))
                ))
            const incremental = yield* recalls()
            yield* brains.drop(bank)
            assert.deepStrictEqual(incremental, yield* recalls())
          })

        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 8 }), (ops) =>
              Effect.runPromiseWith(context)(
                scenario(ops).pipe(Effect.orDie) as Effect.Effect<void, never, SqlClient.SqlClient | Foreground>
              )),
            { numRuns: 8, endOnFailure: true }
          )
        )
      }),
    180_000
  )

  it.effect("an idle brain is written to its kept file before it is released, and the next read asks for the file", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bank = `brain-idle-${bankNumber++}`
      const seeded = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
        json: { items: sentences.slice(0, 5).map((content) => ({ content })) }
      })
      assert.strictEqual(seeded.status, 200, seeded.text)
      const kept: Array<[string, number]> = []
      const loads: Array<string> = []
      yield* Effect.gen(function*() {
        const brains = yield* BankBrains
        yield* brains.attachFiles({
          load: (bankId) => Effect.sync(() => void loads.push(bankId)).pipe(Effect.as(Option.none())),
          keepNow: () => Effect.void,
          keep: (bankId, memories) => Effect.sync(() => void kept.push([bankId, memories]))
        })
        const memories = Option.getOrThrow(yield* brains.available(bank)).keywords.size
        assert.deepStrictEqual(loads, [bank], "a cold read asks for the kept file first")
        assert.deepStrictEqual(kept, [], "nothing is written while the brain is in use")
        // Idle past its time to live: the sweep (every second here) writes it, then releases it.
        yield* eventually(brains.state(bank), (state) => !state.loaded, "10 seconds", {
          what: "the idle brain released",
          interval: "100 millis"
        })
        assert.deepStrictEqual(kept, [[bank, memories]])
        assert.isFalse((yield* brains.state(bank)).loaded)
        yield* brains.available(bank)
        assert.deepStrictEqual(loads, [bank, bank])
        assert.strictEqual((yield* brains.state(bank)).stats.builds, 2)
      }).pipe(Effect.provide(BankBrains.layerWith({ idleTimeToLive: "500 millis" })))
    }))

  it.effect("a bulk change is read as a rebuild, and answers the same", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const bank = "brain-bulk"
      const base = `/v1/default/banks/${bank}`
      const check = Effect.gen(function*() {
        const brains = yield* BankBrains
        yield* current(bank)
        const items = sentences.map((content, n) => ({ content, document_id: `doc-${n % 2}` }))
        assert.strictEqual((yield* server.request("POST", `${base}/memories`, { json: { items } })).status, 200)
        yield* brains.changed(bank)
        assert.deepStrictEqual(answers(yield* current(bank)), answers(yield* fresh(bank)))
        assert.oneOf((yield* server.request("DELETE", `${base}/documents/doc-0`)).status, [200, 204])
        yield* brains.changed(bank)
        assert.deepStrictEqual(answers(yield* current(bank)), answers(yield* fresh(bank)))
      })
      yield* check.pipe(Effect.provide(BankBrains.layerWith({ bulkChange: 3 })))
    }))

  it.effect("a write its writer applies: reads keep the brain while the catch-up waits for the database, then see it", () =>
    Effect.gen(function*() {
      const brains = yield* BankBrains
      const sql = yield* SqlClient.SqlClient
      const { bank, ids } = yield* seeded("brain-apply", 6)
      yield* current(bank)

      /**
       * Deletes a memory behind the brain's back (the change log records it), then holds the change log locked in a
       * transaction: a catch-up cannot read it until `release` (on PGlite nothing can reach the one session).
       */
      const deleteThenBlockCatchUp = (id: string) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM memory_units WHERE id = ${id}`
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          yield* sql`LOCK TABLE memory_unit_changes IN ACCESS EXCLUSIVE MODE`.pipe(
            Effect.andThen(Deferred.succeed(locked, undefined)),
            Effect.andThen(Deferred.await(release)),
            sql.withTransaction,
            Effect.forkChild
          )
          yield* Deferred.await(locked)
          return release
        })
      const readWithin = Effect.timeoutOption(brains.available(bank), "2 seconds")
      const holds = (id: string) => (brain: Option.Option<Option.Option<Brain>>) =>
        Option.getOrThrow(Option.getOrThrow(brain)).records.row(id) !== undefined

      // Applied by its writer: the read does not wait for the catch-up, and answers from the brain as it was.
      const release = yield* deleteThenBlockCatchUp(ids[0]!)
      // Started at once: the write is counted (and its catch-up waits for the lock) before the read below.
      const applying = yield* Effect.forkChild(brains.applyWrite(bank), { startImmediately: true })
      const during = yield* readWithin
      assert.isTrue(Option.isSome(during), "a read waited for a write nobody has been told of")
      assert.isTrue(holds(ids[0]!)(during), "the brain as it was, before the unacknowledged write")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(applying)
      // Once applyWrite has returned (when a retain is acknowledged), every read sees the write.
      assert.isFalse(holds(ids[0]!)(yield* readWithin))

      // `changed` (a write already acknowledged): a read waits for its catch-up, however long the database takes.
      const releaseAgain = yield* deleteThenBlockCatchUp(ids[1]!)
      yield* brains.changed(bank)
      const blocked = yield* Effect.forkChild(brains.available(bank), { startImmediately: true })
      assert.isTrue(Option.isNone(yield* Effect.timeoutOption(Fiber.join(blocked), "1 second")))
      yield* Deferred.succeed(releaseAgain, undefined)
      assert.isUndefined(Option.getOrThrow(yield* Fiber.join(blocked)).records.row(ids[1]!))
    }))

  it.effect("a catch-up reads what was written in one statement", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const brains = yield* BankBrains
      const sql = yield* SqlClient.SqlClient
      const { bank, ids } = yield* seeded("brain-one-read", 6)
      yield* current(bank)
      // Behind the brain's back: one memory removed, one rewritten (the change log records both); then one added.
      yield* sql`DELETE FROM memory_units WHERE id = ${ids[0]!}`
      yield* sql`UPDATE memory_units SET text = 'Caroline moved the support group to Tuesdays.' WHERE id = ${ids[1]!}`
      const added = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
        json: { items: [{ content: sentences[7]! }] }
      })
      assert.strictEqual(added.status, 200, added.text)
      yield* sql`UPDATE memory_units SET text = 'Caroline moved the support group to Fridays.' WHERE id = ${ids[2]!}`

      const reads = yield* readsOf(brains.applyWrite(bank))
      assert.strictEqual(reads.length, 1, reads.join("\n---\n"))
      const brain = yield* current(bank)
      assert.isUndefined(brain.records.row(ids[0]!))
      assert.include(brain.records.row(ids[2]!)!.text, "Fridays")
      assert.deepStrictEqual(answers(brain), answers(yield* fresh(bank)))
    }))

  it.effect("a writer's delta read in its transaction is applied with no read, or read again if the brain moved", () =>
    Effect.gen(function*() {
      const brains = yield* BankBrains
      const sql = yield* SqlClient.SqlClient
      const { bank, ids } = yield* seeded("brain-write-delta", 6)
      yield* current(bank)
      const rewriteAndRead = (id: string, text: string) =>
        sql`UPDATE memory_units SET text = ${text} WHERE id = ${id}`.pipe(
          Effect.andThen(brains.deltaOfWrite(bank)),
          sql.withTransaction
        )
      const applying = (written: WriteDelta | undefined) => readsOf(brains.applyWrite(bank, written))

      // Read in the transaction (it sees the uncommitted row), applied after the commit without a statement.
      const written = yield* rewriteAndRead(ids[0]!, "Caroline moved the support group to Fridays.")
      assert.isDefined(written)
      assert.deepStrictEqual(yield* applying(written), [])
      assert.include((yield* current(bank)).records.row(ids[0]!)!.text, "Fridays")

      // Another write applied between the read and its application: the delta is stale, so it is read again.
      const stale = yield* rewriteAndRead(ids[1]!, "Melanie painted a sunset over the sea.")
      yield* sql`DELETE FROM memory_units WHERE id = ${ids[2]!}`
      yield* brains.applyWrite(bank)
      assert.strictEqual((yield* applying(stale)).length, 1)
      const brain = yield* current(bank)
      assert.include(brain.records.row(ids[1]!)!.text, "sunset")
      assert.isUndefined(brain.records.row(ids[2]!))
      assert.deepStrictEqual(answers(brain), answers(yield* fresh(bank)))

      // A retain reads its delta inside its own transaction: the retain's only read of the change log's entries (its
      // duplicate check reads only where the log stands, to lend the writer the brain's vectors).
      const deltaReads: Array<boolean> = []
      const retain = yield* Retain
      yield* retain.retainNow(bank, { items: [{ content: sentences[8]! }] }).pipe(
        Effect.provideService(Statement.CurrentTransformer, (statement, _sql, fiber) => {
          const [text] = statement.compile()
          if (text.includes("memory_unit_changes") && !text.includes("DELETE") && !text.includes("content_hash")) {
            deltaReads.push(Context.getOption(fiber.context, sql.transactionService)._tag === "Some")
          }
          return Effect.succeed(statement)
        })
      )
      assert.deepStrictEqual(deltaReads, [true])
      const after = yield* current(bank)
      assert.isTrue(after.records.size === ids.length, "the retained memory is in the brain")
      assert.deepStrictEqual(answers(after), answers(yield* fresh(bank)))
    }))

  it.effect("one process prunes the change log in batches, not after every catch-up", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { bank, ids } = yield* seeded("brain-prune", 8)
      const logged = Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM memory_unit_changes WHERE bank_id = ${bank}`,
        (rows) => rows[0]!.n
      )
      const check = Effect.gen(function*() {
        const brains = yield* BankBrains
        yield* current(bank)
        const removeAndCatchUp = (id: string) =>
          Effect.gen(function*() {
            yield* sql`DELETE FROM memory_units WHERE id = ${id}`
            yield* brains.changed(bank)
            yield* current(bank)
          })
        // The first catch-up prunes (below its own last entry, which stays); the next two leave theirs.
        for (const id of ids.slice(0, 3)) yield* removeAndCatchUp(id)
        yield* Effect.sleep("300 millis")
        assert.strictEqual(yield* logged, 3, "pruned after a catch-up that was not the batch's")
        // The log has moved three entries past the last prune: the next catch-up prunes all but its last.
        yield* removeAndCatchUp(ids[3]!)
        yield* eventually(logged, (n) => n === 1)
        assert.deepStrictEqual(answers(yield* current(bank)), answers(yield* fresh(bank)))
      })
      yield* check.pipe(Effect.provide(BankBrains.layerWith({ pruneEvery: { entries: 3, millis: 3_600_000 } })))
    }))

  it.effect("a bulk write its writer applies: the writer does not wait for the rebuild, reads keep the brain until it is done", () =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const sql = yield* SqlClient.SqlClient
      const bank = `brain-apply-bulk-${bankNumber++}`
      const seeded = yield* server.request("POST", `/v1/default/banks/${bank}/memories`, {
        json: { items: sentences.map((content) => ({ content })) }
      })
      assert.strictEqual(seeded.status, 200, seeded.text)
      yield* Effect.gen(function*() {
        const brains = yield* BankBrains
        yield* current(bank)
        const ids = (yield* sql<{ id: string }>`SELECT id FROM memory_units WHERE bank_id = ${bank} ORDER BY seq`)
          .map((row) => row.id)
        // More changes than `bulkChange` behind the brain's back: the catch-up reads the bank whole instead.
        const gone = ids.slice(0, 5)
        yield* sql`DELETE FROM memory_units WHERE id IN ${sql.in(gone)}`
        yield* brains.applyWrite(bank)
        const during = yield* current(bank)
        assert.isTrue(gone.every((id) => during.records.row(id) !== undefined), "the writer waited for the rebuild")
        yield* eventually(
          brains.available(bank),
          (brain) => Option.isSome(brain) && gone.every((id) => brain.value.records.row(id) === undefined),
          "10 seconds",
          { what: "the rebuilt brain without the deleted memories", interval: "20 millis" }
        )
      }).pipe(Effect.provide(BankBrains.layerWith({ bulkChange: 3, pageRows: { memories: 1, links: 2 } })))
    }))
})
