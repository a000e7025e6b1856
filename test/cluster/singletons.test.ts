/**
 * Loops that scan every bank (webhook delivery, dream schedules, the brain warm-up) run on exactly one runner of a
 * cluster, never on a client, and move to another runner when theirs is SIGKILLed. PostgreSQL tier only.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Child } from "../support/ChildService.ts"
import { makeCluster, shardsSpread, until } from "../support/ClusterNodes.ts"
import { databaseTier } from "../support/TestDatabase.ts"

const shards = 24
const singletons = ["webhook-delivery", "dream-scheduler", "brain-startup-warmup"]

/** Whether the node's log says the singleton runs there now (its last start not followed by a stop). */
const runsOn = (child: Child, name: string) => {
  const output = child.output()
  return output.lastIndexOf(`singleton ${name} runs on this runner`) >
    output.lastIndexOf(`singleton ${name} stopped on this runner`)
}

describe.skipIf(databaseTier === "pglite")("cluster singletons", () => {
  it.live(
    "each scan runs on one runner, none on the client, and moves when that runner dies",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const cluster = makeCluster(databaseTier, shards, {
          SERVICE_API_BRAIN_ENABLED: "true",
          SERVICE_API_BRAIN_STARTUP_WARMUP: "true"
        })
        const first = yield* cluster.start("runner")
        const second = yield* cluster.start("runner")
        const client = yield* cluster.start("client")
        const runners = [first, second]
        yield* shardsSpread(runners, shards)

        // Once shards settle, every singleton runs on exactly one runner.
        const holders = (name: string) => runners.filter((runner) => runsOn(runner.child, name))
        yield* until(
          "every singleton on exactly one runner",
          async () => singletons.every((name) => holders(name).length === 1) ? true : undefined,
          60_000,
          second.child
        )
        for (const name of singletons) {
          assert.notInclude(client.child.output(), `singleton ${name}`, "a client runs none")
        }

        // Kill the runner that delivers webhooks; the survivor runs every singleton.
        const holder = holders("webhook-delivery")[0]!
        const survivor = runners.find((runner) => runner !== holder)!
        holder.child.process.kill("SIGKILL")
        yield* Effect.promise(() => holder.child.exited)
        const killedAt = Date.now()
        yield* until(
          "the survivor runs every singleton",
          async () => singletons.every((name) => runsOn(survivor.child, name)) ? true : undefined,
          60_000,
          survivor.child
        )
        console.log(`singletons moved to the survivor ${Date.now() - killedAt} ms after the kill`)
        for (const name of singletons) {
          assert.notInclude(client.child.output(), `singleton ${name}`, "a client runs none")
        }
      })),
    180_000
  )
})
