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

describe("importRows past the row limit", () => {
  it("refuses more than 10,000 rows before parsing any (blank lines do not count)", () => {
    // 10,001 lines that are not even JSON: counted, never parsed, so the answer is the count, not 10,001 bad lines.
    const over = stepsOf(importRows({ jsonl: Array.from({ length: 10_001 }, () => "not json").join("\n") }, "custom"))
    const refused = over.value as any
    assert.strictEqual(refused._tag, "invalid")
    assert.include(refused.error.detail, "holds 10001 rows; at most 10000 per import")
    const withBlanks = Array.from({ length: 10_000 }, (_, n) => JSON.stringify({ n })).join("\n\n\r\n") + "\n"
    assert.strictEqual((stepsOf(importRows({ jsonl: withBlanks }, "custom")).value as any)._tag, "ok")
    const sets = Array.from({ length: 10_001 }, () => "not an object")
    assert.include((stepsOf(importRows({ sets }, "custom")).value as any).error.detail, "holds 10001 rows")
  })
})
