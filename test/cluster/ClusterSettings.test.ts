/** The cluster settings' start-up checks, on the settings alone (no node is started). */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Option, Redacted } from "effect"
import { clusterSettingsProblem, defaultClusterSettings } from "../../src/cluster/ClusterSettings.ts"

const runner = {
  ...defaultClusterSettings,
  mode: "runner" as const,
  secret: Option.some(Redacted.make("a-secret-of-enough-length"))
}
const database = Option.some("postgres://engram@127.0.0.1/engram")

describe("cluster settings", () => {
  it("takes the default shard lock expiration and any from 3 seconds on", () => {
    assert.isUndefined(clusterSettingsProblem(runner, database))
    assert.isUndefined(clusterSettingsProblem({ ...runner, shardLockExpiration: Duration.seconds(3) }, database))
  })

  it("refuses a shard lock expiration under 3 seconds, naming the variable", () => {
    const problem = clusterSettingsProblem({ ...runner, shardLockExpiration: Duration.millis(500) }, database)
    assert.strictEqual(problem, "SERVICE_API_CLUSTER_SHARD_LOCK_EXPIRATION must be at least 3 seconds")
  })
})
