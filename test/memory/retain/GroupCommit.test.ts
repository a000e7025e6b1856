/**
 * The group committer's own rules, with a writer that records what it is handed: retains that wait while the bank's
 * writer is busy are written together as one batch, each answered with its share; a group that fails is written
 * again retain by retain, so only the retain that failed fails; banks do not share groups; a retain too large to
 * share, or with a document, is not grouped.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
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

/** A writer that waits for `gate` before its first write, fails on a "poison" fact, and creates every other fact. */
const recordingWriter = (gate: Deferred.Deferred<void>) => {
  const calls: Array<{ bankId: string; ids: ReadonlyArray<string> }> = []
  const write = (write: RetainWrite) =>
    Effect.gen(function*() {
      const ids = write.batch.facts.map((fact) => fact.id)
      calls.push({ bankId: write.batch.bankId, ids })
      if (calls.length === 1) yield* Deferred.await(gate)
      if (write.batch.facts.some((fact) => fact.text === "poison")) return yield* Effect.die(new Error("bad row"))
      // The second fact of a retain's content is a duplicate of something stored: not created.
      return { created: ids.filter((id) => !id.endsWith("-dup")), duplicates: 0, causalLinks: 0 }
    })
  return { calls, write }
}

describe("group commit", () => {
  it.effect("retains that wait while the writer is busy are written as one batch, each answered with its share", () =>
    Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const writer = recordingWriter(gate)
      const commit = yield* makeGroupCommit(writer.write)
      const first = yield* Effect.forkChild(commit(retain("a", ["a1", "one"])))
      yield* Effect.yieldNow
      const waiting = yield* Effect.forEach(
        [retain("a", ["a2", "two"]), retain("a", ["a3", "three"], ["a3-dup", "three again"]), retain("b", ["b1", "x"])],
        (write) => Effect.forkChild(commit(write))
      )
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* Fiber.join(first), { created: ["a1"], duplicates: 0, causalLinks: 0 })
      const [two, three, other] = yield* Effect.forEach(waiting, Fiber.join)
      assert.deepStrictEqual(two!.created, ["a2"])
      assert.deepStrictEqual(three, { created: ["a3"], duplicates: 1, causalLinks: 0 })
      assert.deepStrictEqual(other!.created, ["b1"])
      // Bank a: its first retain alone (the writer was idle), then the two that waited, together; bank b on its own.
      assert.deepStrictEqual(writer.calls.filter((call) => call.bankId === "a").map((call) => call.ids), [
        ["a1"],
        ["a2", "a3", "a3-dup"]
      ])
      assert.deepStrictEqual(writer.calls.filter((call) => call.bankId === "b").map((call) => call.ids), [["b1"]])
    })))

  it.effect("a group that fails is written again retain by retain: only the bad one fails", () =>
    Effect.scoped(Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const writer = recordingWriter(gate)
      const commit = yield* makeGroupCommit(writer.write)
      const first = yield* Effect.forkChild(commit(retain("a", ["a1", "one"])))
      yield* Effect.yieldNow
      const waiting = yield* Effect.forEach(
        [retain("a", ["a2", "two"]), retain("a", ["a3", "poison"]), retain("a", ["a4", "four"])],
        (write) => Effect.forkChild(Effect.exit(commit(write)))
      )
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      const [two, poisoned, four] = yield* Effect.forEach(waiting, Fiber.join)
      assert.isTrue(Exit.isSuccess(two!) && two.value.created[0] === "a2")
      assert.isTrue(Exit.isFailure(poisoned!), "the bad retain fails")
      assert.isTrue(Exit.isSuccess(four!) && four.value.created[0] === "a4")
      assert.deepStrictEqual(writer.calls.map((call) => call.ids), [["a1"], ["a2", "a3", "a4"], ["a2"], ["a3"], ["a4"]])
    })))

  it("only plain retains of a bounded size are grouped", () => {
    const plain = retain("a", ["a1", "one"]).batch
    assert.isTrue(groupable(plain))
    assert.isFalse(groupable({ ...plain, operationId: "op" }), "a queued operation keeps its own transaction")
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
