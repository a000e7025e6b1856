/**
 * The group committer's own rules, with a writer that records what it is handed: retains that wait while the bank's
 * writer is busy are written together as one batch, each answered with its share; a group that fails is written
 * again retain by retain, so only the retain that failed fails; banks do not share groups; a retain too large to
 * share, or with a document, is not grouped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { groupable, makeGroupCommit, type RetainWrite } from "../../../src/memory/retain/GroupCommit.ts"
import type { PreparedFact, WriteBatch } from "../../../src/memory/retain/MemoryWriter.ts"

const fact = (id: string, text: string) => ({ id, text } as unknown as PreparedFact)

const retain = (bankId: string, ...facts: ReadonlyArray<[string, string]>): RetainWrite => ({
  batch: {
    bankId,
    operationId: null,
    embeddingModel: "m",
    dimensions: 3,
    documents: [],
    chunks: [],
    facts: facts.map(([id, text]) => fact(id, text))
  },
  consolidates: false
})

/**
 * A committer whose writer is busy with bank a's first retain while `later` arrive, then freed. The writer records
 * the ids it is handed, fails a batch holding a "poison" fact, and creates every fact but those ending in "-dup" (as
 * if stored already). Answers how the first and each later retain ended, and the writer's calls in order.
 */
const whileBusy = (later: ReadonlyArray<RetainWrite>) =>
  Effect.scoped(Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const calls: Array<{ bankId: string; ids: ReadonlyArray<string>; operations: ReadonlyArray<string | null> }> = []
    const commit = yield* makeGroupCommit((write: RetainWrite) =>
      Effect.gen(function*() {
        const ids = write.batch.facts.map((fact) => fact.id)
        const operations = write.batch.facts.map((fact) =>
          fact.operationId !== undefined ? fact.operationId : write.batch.operationId
        )
        calls.push({ bankId: write.batch.bankId, ids, operations })
        if (calls.length === 1) yield* Deferred.await(gate)
        if (write.batch.facts.some((fact) => fact.text === "poison")) return yield* Effect.die(new Error("bad row"))
        return { created: ids.filter((id) => !id.endsWith("-dup")), duplicates: 0, causalLinks: 0 }
      })
    )
    const first = yield* Effect.forkChild(Effect.exit(commit(retain("a", ["a1", "one"]))))
    yield* Effect.yieldNow
    const waiting = yield* Effect.forEach(later, (write) => Effect.forkChild(Effect.exit(commit(write))))
    yield* Effect.yieldNow
    yield* Deferred.succeed(gate, undefined)
    return { first: yield* Fiber.join(first), later: yield* Effect.forEach(waiting, Fiber.join), calls }
  }))

/** The value of a retain that succeeded (fails the test otherwise). */
const value = <A>(exit: Exit.Exit<A, unknown>) => {
  assert.isTrue(Exit.isSuccess(exit), String(exit))
  return (exit as Exit.Success<A, unknown>).value
}

describe("group commit", () => {
  it.effect("retains that wait while the writer is busy are written as one batch, each answered with its share", () =>
    Effect.gen(function*() {
      const { first, later, calls } = yield* whileBusy([
        retain("a", ["a2", "two"]),
        retain("a", ["a3", "three"], ["a3-dup", "three again"]),
        retain("b", ["b1", "x"])
      ])
      assert.deepStrictEqual(value(first), { created: ["a1"], duplicates: 0, causalLinks: 0 })
      const [two, three, other] = later.map(value)
      assert.deepStrictEqual(two!.created, ["a2"])
      assert.deepStrictEqual(three, { created: ["a3"], duplicates: 1, causalLinks: 0 })
      assert.deepStrictEqual(other!.created, ["b1"])
      // Bank a: its first retain alone (the writer was idle), then the two that waited, together; bank b on its own.
      assert.deepStrictEqual(calls.filter((call) => call.bankId === "a").map((call) => call.ids), [
        ["a1"],
        ["a2", "a3", "a3-dup"]
      ])
      assert.deepStrictEqual(calls.filter((call) => call.bankId === "b").map((call) => call.ids), [["b1"]])
    }))

  it.effect("queued retains grouped together: each fact is written with its own retain's operation", () =>
    Effect.gen(function*() {
      const queued = (operationId: string | null, id: string) => {
        const write = retain("a", [id, `text ${id}`])
        return { ...write, batch: { ...write.batch, operationId } }
      }
      const { calls } = yield* whileBusy([queued("op-1", "a2"), queued(null, "a3"), queued("op-2", "a4")])
      assert.deepStrictEqual(calls[1]!.ids, ["a2", "a3", "a4"])
      assert.deepStrictEqual(calls[1]!.operations, ["op-1", null, "op-2"])
    }))

  it.effect("a group that fails is written again retain by retain: only the bad one fails", () =>
    Effect.gen(function*() {
      const { first, later, calls } = yield* whileBusy([
        retain("a", ["a2", "two"]),
        retain("a", ["a3", "poison"]),
        retain("a", ["a4", "four"])
      ])
      value(first)
      const [two, poisoned, four] = later
      assert.deepStrictEqual(value(two!).created, ["a2"])
      assert.isTrue(Exit.isFailure(poisoned!), "the bad retain fails")
      assert.deepStrictEqual(value(four!).created, ["a4"])
      assert.deepStrictEqual(calls.map((call) => call.ids), [["a1"], ["a2", "a3", "a4"], ["a2"], ["a3"], ["a4"]])
    }))

  it.effect("a committer whose scope closes mid-write answers its waiting retains, which do not hang", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const writing = yield* Deferred.make<void>()
      // A writer that never finishes: the service stops while it writes.
      const commit = yield* makeGroupCommit((_: RetainWrite) =>
        Effect.andThen(Deferred.succeed(writing, undefined), Effect.never)
      ).pipe(Scope.provide(scope))
      // As a queued retain waits: uninterruptibly, so that it sees a commit through.
      const first = yield* Effect.forkChild(Effect.exit(Effect.uninterruptible(commit(retain("a", ["a1", "one"])))))
      yield* Deferred.await(writing)
      const waiting = yield* Effect.forkChild(Effect.exit(Effect.uninterruptible(commit(retain("a", ["a2", "two"])))))
      yield* Effect.yieldNow
      yield* Scope.close(scope, Exit.void)
      const ended = yield* Effect.all([Fiber.join(first), Fiber.join(waiting)]).pipe(Effect.timeout("5 seconds"))
      for (const exit of ended) assert.isTrue(Exit.hasInterrupts(exit), String(exit))
    }))

  it("only plain retains of a bounded size are grouped", () => {
    const plain = retain("a", ["a1", "one"]).batch
    assert.isTrue(groupable(plain))
    assert.isTrue(groupable({ ...plain, operationId: "op" }), "a queued retain is grouped too")
    const withDocument: WriteBatch = {
      ...plain,
      documents: [{
        documentId: "d",
        replace: true,
        metadata: {},
        tags: [],
        context: null,
        originalText: "x",
        keptChunkIds: []
      }]
    }
    assert.isFalse(groupable(withDocument))
    const large = { ...plain, facts: Array.from({ length: 501 }, (_, i) => fact(`f${i}`, `fact ${i}`)) }
    assert.isFalse(groupable(large))
  })
})
