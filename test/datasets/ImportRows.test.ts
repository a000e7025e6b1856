/**
 * An import's rows are checked as sliced work: 2,000 rows pause at least every hundred, and whether run in slices
 * or whole, the answer is the same payloads (or the same refusal).
 */
import { assert, describe, it } from "@effect/vitest"
import { runWhole } from "../../src/brain/Sliced.ts"
import { importRows } from "../../src/datasets/ImportRows.ts"

const row = (n: number) => ({ messages: [{ role: "user", content: `question ${n}` }] })

const pausesOf = (work: Generator<void, unknown, void>) => {
  let pauses = 0
  let step = work.next()
  while (step.done !== true) {
    pauses++
    step = work.next()
  }
  return { pauses, result: step.value }
}

describe("importRows", () => {
  it("pauses every hundred rows and answers what a whole run answers", () => {
    const jsonl = Array.from({ length: 2_000 }, (_, n) => JSON.stringify(row(n))).join("\n")
    const sliced = pausesOf(importRows({ jsonl }, "chat_messages"))
    assert.isAtLeast(sliced.pauses, 20)
    assert.deepStrictEqual(sliced.result, runWhole(importRows({ jsonl }, "chat_messages")))
    const answer = sliced.result as { _tag: string; payloads: Array<unknown> }
    assert.strictEqual(answer._tag, "ok")
    assert.deepStrictEqual(answer.payloads, Array.from({ length: 2_000 }, (_, n) => row(n)))

    const sets = Array.from({ length: 1_000 }, (_, n) => (n === 700 ? { messages: [] } : row(n)))
    const refused = pausesOf(importRows({ sets }, "chat_messages"))
    assert.isAtLeast(refused.pauses, 10)
    assert.strictEqual((refused.result as { _tag: string })._tag, "invalid")
    assert.include((refused.result as any).error.detail, "sets[700]")
  })
})
