/** The tests' polling helper keeps its deadline even when a read never answers (it used to wait on it for good). */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { eventuallyAsync } from "./Eventually.ts"

describe("eventuallyAsync", () => {
  it.live("fails by its deadline, naming what it waited for, when a read never answers", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        eventuallyAsync(() => new Promise<string>(() => {}), (value) => value === "ready", "200 millis", {
          what: "a server that never answers"
        })
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "a server that never answers not reached")
    }))

  it.live("returns the first value that holds", () =>
    Effect.gen(function*() {
      let reads = 0
      const value = yield* eventuallyAsync(async () => ++reads, (n) => n >= 3, "5 seconds", { interval: "1 millis" })
      assert.strictEqual(value, 3)
    }))
})
