/**
 * An import's rows are checked as sliced work: 2,000 rows pause at least every hundred, and whether run in slices
 * or whole, the answer is the same payloads (or the same refusal).
 */
import { assert, describe, it } from "@effect/vitest"
import { runWhole } from "../../src/brain/Sliced.ts"
import { importRows } from "../../src/datasets/ImportRows.ts"
import { stepsOf } from "../support/SlicedSteps.ts"

const row = (n: number) => ({ messages: [{ role: "user", content: `question ${n}` }] })

describe("importRows", () => {
  it("pauses every hundred rows and answers what a whole run answers", () => {
    const jsonl = Array.from({ length: 2_000 }, (_, n) => JSON.stringify(row(n))).join("\n")
    const sliced = stepsOf(importRows({ jsonl }, "chat_messages"))
    assert.isAtLeast(sliced.pauses, 20)
    assert.deepStrictEqual(sliced.value, runWhole(importRows({ jsonl }, "chat_messages")))
    const answer = sliced.value as { _tag: string; payloads: Array<unknown> }
    assert.strictEqual(answer._tag, "ok")
    assert.deepStrictEqual(answer.payloads, Array.from({ length: 2_000 }, (_, n) => row(n)))

    const sets = Array.from({ length: 1_000 }, (_, n) => (n === 700 ? { messages: [] } : row(n)))
    const refused = stepsOf(importRows({ sets }, "chat_messages"))
    assert.isAtLeast(refused.pauses, 10)
    assert.strictEqual((refused.value as { _tag: string })._tag, "invalid")
    assert.include((refused.value as any).error.detail, "sets[700]")
  })
})
