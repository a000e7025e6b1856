/**
 * One server per PGlite data directory: a second open of a directory another live process holds fails at start-up
 * naming that process, and changes nothing in it; so does a second open in the same process; a lock left by a process
 * that is gone (a crash, a kill) is taken over; closing releases it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import * as SqlLive from "../../../layers/storage/SqlLive.ts"

const freshDir = () => {
  const root = mkdtempSync(Path.join(tmpdir(), "engram-lock-"))
  return { root, dataDir: Path.join(root, "pglite"), lockFile: Path.join(root, "pglite.lock") }
}

/** Opens PGlite on `dataDir`, runs `use`, closes it. */
const withDatabase = <A>(dataDir: string, use: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.scoped(
    Effect.flatMap(Layer.build(SqlLive.pglite({ dataDir, thread: "main" })), (context) => Effect.provide(use, context))
  )

/** A process that lives until killed, standing in for another server. */
const otherProcess = () => {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  return { pid: child.pid!, stop: () => new Promise((resolve) => child.once("exit", resolve).kill("SIGKILL")) }
}

describe("the data directory lock", () => {
  it.effect(
    "a directory held by another live process is refused, and taken over once that process is gone",
    () =>
      Effect.gen(function*() {
        const { dataDir, lockFile, root } = freshDir()
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
        yield* withDatabase(dataDir, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE kept (n int)`))
        assert.isFalse(existsSync(lockFile), "closing releases the lock")

        const other = otherProcess()
        writeFileSync(lockFile, `${other.pid}\n`)
        const refused = yield* Effect.exit(withDatabase(dataDir, Effect.void))
        assert.isTrue(Exit.isFailure(refused))
        assert.match(String(Exit.isFailure(refused) ? refused.cause : ""), new RegExp(`in use by process ${other.pid}`))
        assert.strictEqual(readFileSync(lockFile, "utf8").trim(), String(other.pid), "the holder's lock was touched")

        yield* Effect.promise(other.stop)
        const tables = yield* withDatabase(
          dataDir,
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM kept`)
        )
        assert.deepStrictEqual(tables, [{ n: 0 }], "the stale lock was not taken over")
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("a second open in the same process is refused while the first holds it", () =>
    Effect.gen(function*() {
      const { dataDir, root } = freshDir()
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      const second = yield* withDatabase(dataDir, Effect.exit(withDatabase(dataDir, Effect.void)))
      assert.isTrue(Exit.isFailure(second))
      assert.match(String(Exit.isFailure(second) ? second.cause : ""), /already open in this process/)
      // Released with the first: it opens again.
      yield* withDatabase(dataDir, Effect.void)
    }).pipe(Effect.scoped), 60_000)
})
