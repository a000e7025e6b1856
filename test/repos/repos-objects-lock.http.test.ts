/**
 * The repo object store's advisory lock is per schema (migration 0041, `src/repos/ObjectsLock.ts`): a transaction of
 * another schema holding it exclusive (as that tenant's garbage-collection sweep does) does not hold up this
 * tenant's commit, while one of this schema still does, until it ends. Before, the key was one for the whole
 * database, so tenants in other schemas queued behind each other's sweeps and fork slices. The SQL collector of
 * the migrations takes the same per-schema key as the server, on both tiers.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as SqlLive from "../../layers/storage/SqlLive.ts"
import { EngramConfig } from "../../src/config/EngramConfig.ts"
import { objectsLockExclusive } from "../../src/repos/ObjectsLock.ts"
import { eventually } from "../support/Eventually.ts"
import { settled } from "../support/HttpCalls.ts"
import { freshSchemaName } from "../support/TestRun.ts"
import { databaseTier, testApp, TestServer } from "../support/TestServer.ts"

const bankId = "repo-lock"
const bank = `/v1/default/banks/${bankId}`

/** Runs `effect` on a connection pool of its own to `schema` of the test database (PostgreSQL only). */
const onSchema = <A, E, R>(schema: string, effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Layer.build(SqlLive.postgres({ url: Redacted.make(databaseTier), schema, maxConnections: 2 })).pipe(
      Effect.flatMap((context) =>
        Effect.provide(effect, context) as Effect.Effect<A, E, Exclude<R, SqlClient.SqlClient>>
      )
    )
  )

/** Sessions waiting for this schema's repo object lock. */
const waitingForObjects = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_locks
    WHERE locktype = 'advisory' AND NOT granted AND classid::int = hashtext('engram.repo_objects')
      AND objid::int = hashtext(current_schema()) AND objsubid = 2`
  return rows[0]!.n
})

layer(testApp(), { excludeTestServices: true })("memory repos: the object store's lock is per schema", (it) => {
  const ok = (method: string, path: string, json?: unknown): Effect.Effect<any, never, TestServer> =>
    Effect.gen(function*() {
      const server = yield* TestServer
      const response = yield* server.request(method, path, json === undefined ? {} : { json })
      assert.strictEqual(response.status, 200, `${method} ${path}: ${response.text}`)
      return response.body as any
    })
  const retain = (content: string) =>
    Effect.andThen(ok("POST", `${bank}/memories`, { items: [{ content }] }), settled(bankId))

  it.effect("the SQL collector takes the schema's key, the one the server's statements take", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const held = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT repo_collect_garbage()`
        return yield* sql<{ same: boolean; old: number }>`
          SELECT bool_or(classid::int = hashtext('engram.repo_objects') AND objid::int = hashtext(current_schema())
                         AND objsubid = 2) AS same,
                 count(*) FILTER (WHERE objsubid = 1 AND objid::int = hashtext('engram.repo_objects'))::int AS old
          FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`
      }))
      assert.isTrue(held[0]!.same, "repo_collect_garbage() holds (engram.repo_objects, this schema)")
      assert.strictEqual(held[0]!.old, 0, "nor the old database-wide key")
    }))

  it.effect.skipIf(databaseTier === "pglite")(
    "another schema's sweep lock does not hold up a commit; this schema's does until it ends",
    () =>
      Effect.gen(function*() {
        const config = yield* EngramConfig
        yield* ok("PUT", bank, { name: bankId })
        yield* retain("Ines tends the apple orchard in Porto.")
        const repo = yield* ok("POST", `${bank}/repos/enable`, {})
        const repoPath = `/v1/default/repos/${repo.repo_id}`

        // Another tenant's schema, its object lock held exclusive (what its sweep slice takes) across our commit.
        const other = freshSchemaName()
        yield* retain("The Riga lighthouse keeper plays the violin.")
        const beside = yield* onSchema(
          other,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            return yield* sql.withTransaction(
              Effect.andThen(
                sql.unsafe(objectsLockExclusive),
                ok("POST", `${repoPath}/commit`, { message: "beside" }).pipe(
                  Effect.timeoutOrElse({
                    duration: "60 seconds",
                    orElse: () => Effect.die(new Error("the commit waited for another schema's object lock"))
                  })
                )
              )
            )
          })
        )
        assert.isString(beside.commit_id)

        // This tenant's own schema: the commit waits for the lock, and goes through once the transaction ends.
        yield* retain("Boris rows a kayak across the Seoul harbour every dawn.")
        const after = yield* onSchema(
          config.databaseSchema,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            return yield* sql.withTransaction(Effect.gen(function*() {
              yield* sql.unsafe(objectsLockExclusive)
              const commit = yield* Effect.forkChild(ok("POST", `${repoPath}/commit`, { message: "after" }))
              yield* eventually(waitingForObjects, (n) => n > 0, "30 seconds", {
                what: "the commit waiting for this schema's object lock"
              })
              assert.isUndefined(commit.pollUnsafe(), "the commit has not finished while the lock is held")
              return commit
            }))
          })
        ).pipe(Effect.flatMap(Fiber.join))
        assert.notStrictEqual(after.commit_id, beside.commit_id)
        const log = yield* ok("GET", `${repoPath}/log?limit=10`)
        assert.deepStrictEqual(log.commits.slice(0, 2).map((c: any) => c.message), ["after", "beside"])
      })
  )
})
