/**
 * A runner started with another SERVICE_API_CLUSTER_SECRET than the running ones refuses to start. The transport
 * already keeps it from talking to them (ClusterTransport.ts), but it holds the database's credentials, so it could
 * still register in the runner table and take shards by their database locks: the banks of those shards would then
 * sit on a node nobody can reach. Each runner records a fingerprint of its secret by its address; a starting runner
 * compares its own with those of the runners alive now (effect/cluster's own notion: a heartbeat within the shard
 * lock expiry), so a secret is changed by restarting every node, and a node that died long ago is no obstacle.
 *
 * The fingerprint is HKDF of the secret with a label of its own: it is neither the transport's key nor usable to
 * derive it, and a secret of at least 16 characters (the configuration's minimum) does not fall to a guess from it.
 * Two runners with different secrets started at the very same moment can both pass; this guards a misconfigured
 * node, not a hostile one (a hostile holder of the database's credentials is beyond any check here).
 */
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { hkdfSync } from "node:crypto"

/** effect/cluster's default shard lock expiry: a runner whose heartbeat is older is not alive. */
const aliveWithinSeconds = 35

export const secretFingerprint = (secret: Redacted.Redacted<string>): string =>
  Buffer.from(hkdfSync("sha256", Redacted.value(secret), "engram", "engram cluster secret fingerprint v1", 16))
    .toString("hex")

export class ClusterSecretMismatch extends Error {
  readonly others: ReadonlyArray<string>
  constructor(others: ReadonlyArray<string>) {
    super(
      `another SERVICE_API_CLUSTER_SECRET is in use by the running node(s) ${others.join(", ")}: every node of a ` +
        "cluster needs the same secret (to change it, stop every node and start them all with the new one)"
    )
    this.others = others
  }
}

/**
 * Refuses (`ClusterSecretMismatch`) when a live runner other than `address` recorded another fingerprint; otherwise
 * records this runner's. `prefix` is the cluster's table prefix (its runner table is `<prefix>_runners`).
 */
export const checkAndRecord = (prefix: string, address: string, secret: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mine = secretFingerprint(secret)
    const fingerprints = sql(`${prefix}_secret_fingerprints`)
    const runnerTable = `${prefix}_runners`
    yield* sql`CREATE TABLE IF NOT EXISTS ${fingerprints} (
      address TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`
    // The runner table is effect/cluster's, created when the first runner registers.
    const [runners] = yield* sql<{ present: boolean }>`SELECT to_regclass(${runnerTable}) IS NOT NULL AS present`
    if (runners?.present === true) {
      const others = yield* sql<{ address: string }>`
        SELECT f.address FROM ${fingerprints} f JOIN ${sql(runnerTable)} r ON r.address = f.address
        WHERE f.address <> ${address} AND f.fingerprint <> ${mine}
          AND r.last_heartbeat > now() - make_interval(secs => ${aliveWithinSeconds})
        ORDER BY f.address`
      if (others.length > 0) return yield* Effect.fail(new ClusterSecretMismatch(others.map((row) => row.address)))
    }
    yield* sql`INSERT INTO ${fingerprints} (address, fingerprint) VALUES (${address}, ${mine})
      ON CONFLICT (address) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, recorded_at = now()`
  })
