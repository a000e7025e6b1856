/** engram embedded in an Effect program through `Layer.provide`, with no HTTP server at all. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Banks, engramWith, Operations, TaskRegistry } from "../../src/index.ts"
import { eventually } from "../support/Eventually.ts"
import { freshDatabaseSettings } from "../support/TestServer.ts"

describe("library", () => {
  it.live("creates banks and runs a custom background task in-process", () =>
    Effect.gen(function*() {
      const banks = yield* Banks
      const operations = yield* Operations
      const registry = yield* TaskRegistry
      yield* registry.register("double", (operation) =>
        Effect.succeed({ doubled: (operation.payload as { n: number }).n * 2 }))
      const bank = yield* banks.put("embedded", { name: "Embedded", disposition_literalism: 5 })
      assert.strictEqual(bank.disposition.literalism, 5)
      const op = yield* operations.submit({ bankId: "embedded", taskType: "double", payload: { n: 21 } })
      const record = yield* eventually(
        operations.result("embedded", op.id),
        (record) =>
          record.status === "completed" || record.status === "failed",
        "30 seconds",
        { what: "the task finished" }
      )
      assert.deepStrictEqual(record.result, { doubled: 42 })
      const listed = yield* banks.list
      assert.deepStrictEqual(listed.map((b) => b.bankId), ["embedded"])
      const missing = yield* Effect.flip(banks.get("nope"))
      assert.strictEqual(missing._tag, "NotFound")
    }).pipe(Effect.provide(engramWith(freshDatabaseSettings()))), 60_000)
})
