/**
 * A bank whose runner dies moves to the other runner with its brain: with a shared `SERVICE_API_BRAIN_CACHE_DIR`,
 * the new owner loads the `.brain` file the old owner kept (here written by an export) and catches up (a memory retained after the file was
 * written is found), building nothing. PostgreSQL tier only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { health, makeCluster, request, shardsSpread, until } from "../support/ClusterNodes.ts"
import { databaseTier } from "../support/TestDatabase.ts"

const shards = 12

describe.skipIf(databaseTier === "pglite")("a moved shard's brain", () => {
  it.live("is loaded from the file its old owner kept, and caught up", () =>
    Effect.scoped(Effect.gen(function*() {
      const cluster = makeCluster(databaseTier, shards, {
        SERVICE_API_ENABLE_OBSERVATIONS: "false",
        SERVICE_API_BRAIN_CACHE_DIR: mkdtempSync(join(tmpdir(), "engram-shared-brains-")),
        SERVICE_API_BRAIN_KEEP_FILES_MIN_MEMORIES: "10"
      })
      const first = yield* cluster.start("runner")
      const second = yield* cluster.start("runner")
      const runners = [first, second]
      yield* shardsSpread(runners, shards)

      // Banks until one is owned by the first runner, the one that dies. The owner is the runner that built the
      // bank's brain for the recall (recall goes to the owner).
      const brainLoadedOn = (url: string, candidate: string) =>
        fetch(`${url}/v1/default/banks/${candidate}/brain/status`).then(async (r) =>
          (await r.json() as any).metrics.brain_loaded === true
        )
      let bank = ""
      for (let n = 0; n < 24 && bank === ""; n++) {
        const candidate = `moving-${n}`
        const stored = yield* request(`${second.url}/v1/default/banks/${candidate}/memories`, "POST", {
          items: Array.from(
            { length: 20 },
            (_, i) => ({ content: `Hive ${i} of apiary ${n} gave ${i * 2} kg of honey.` })
          )
        })
        assert.strictEqual(stored.status, 200, JSON.stringify(stored.body))
        const recalled = yield* request(`${second.url}/v1/default/banks/${candidate}/memories/recall`, "POST", {
          query: "honey from hive 3"
        })
        assert.strictEqual(recalled.status, 200, JSON.stringify(recalled.body))
        if (yield* Effect.promise(() => brainLoadedOn(first.url, candidate))) bank = candidate
      }
      assert.notStrictEqual(bank, "", "no bank landed on the first runner")
      const path = `/v1/default/banks/${bank}`

      // The owner keeps the brain it built in the shared directory (on release, at a stop, or as here on export).
      const exported = yield* Effect.promise(() => fetch(`${first.url}${path}/brain/export`).then((r) => r.status))
      assert.strictEqual(exported, 200)
      const later = yield* request(`${second.url}${path}/memories`, "POST", {
        items: [{ content: "The queen of hive 40 swarmed into the walnut tree." }]
      })
      assert.strictEqual(later.status, 200, JSON.stringify(later.body))

      first.child.process.kill("SIGKILL")
      yield* Effect.promise(() => first.child.exited)
      yield* until(
        "the survivor owns every shard",
        async () => (await health(second.url)).cluster?.shards_owned === shards ? true : undefined,
        60_000,
        second.child
      )

      const answer = yield* request(`${second.url}${path}/memories/recall`, "POST", {
        query: "queen swarmed walnut tree"
      })
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assert.include(answer.body.results.map((result: any) => result.text).join(" | "), "walnut")
      const status = yield* request(`${second.url}${path}/brain/status`, "GET")
      assert.strictEqual(status.body.metrics.file_loads, 1, JSON.stringify(status.body.metrics))
      assert.strictEqual(status.body.metrics.builds, 0, JSON.stringify(status.body.metrics))
    })), 180_000)
})
