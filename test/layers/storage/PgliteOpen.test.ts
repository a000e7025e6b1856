/**
 * How PGlite is opened on either thread: the shared buffers it starts with (SERVICE_API_PGLITE_SHARED_BUFFERS, 16MB
 * by default), refused sizes, WebAssembly tier-up (SERVICE_API_PGLITE_TIER_UP, off by default), and a new data
 * directory (created by a child process) that opens again with its data.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { openPglite } from "../../../layers/storage/PgliteOpen.ts"
import * as SqlLive from "../../../layers/storage/SqlLive.ts"
import { freshPgliteDataDir } from "../../support/PgliteCopy.ts"

const pgliteTier = (process.env["ENGRAM_TEST_DATABASE"] ?? "pglite") === "pglite"

const opened = (...args: Parameters<typeof openPglite>) =>
  Effect.acquireRelease(Effect.promise(() => openPglite(...args)), (db) => Effect.promise(() => db.close()))

const sharedBuffersOf = (...args: Parameters<typeof openPglite>) =>
  opened(...args).pipe(
    Effect.flatMap((db) => Effect.promise(() => db.query<{ shared_buffers: string }>("SHOW shared_buffers"))),
    Effect.map((result) => result.rows[0]!.shared_buffers),
    Effect.scoped
  )

const refusal = (sharedBuffers: string) =>
  Effect.tryPromise(() => openPglite(undefined, { sharedBuffers })).pipe(
    Effect.flatMap((db) => Effect.promise(() => db.close())),
    Effect.flip,
    Effect.map((error) => String((error as { cause?: unknown }).cause ?? error))
  )

/** The variable set for the scope (a worker thread copies the environment when it starts), then restored. */
const withEnvironment = (name: string, value: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const before = process.env[name]
      process.env[name] = value
      return before
    }),
    (before) => Effect.sync(() => before === undefined ? delete process.env[name] : void (process.env[name] = before))
  )

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(Path.join(tmpdir(), "engram-pglite-open-"))),
  (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
)

describe.runIf(pgliteTier)("openPglite", () => {
  it.effect("starts with 16MB of shared buffers, or the size asked for", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* sharedBuffersOf(undefined), "16MB")
      assert.strictEqual(yield* sharedBuffersOf(undefined, { sharedBuffers: "48MB" }), "48MB")
    }), 60_000)

  it.effect("refuses a size PGlite cannot start with, naming the setting", () =>
    Effect.gen(function*() {
      for (const size of ["2GB", "64kB", "16", "lots"]) {
        const message = yield* refusal(size)
        assert.include(message, "SERVICE_API_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB", size)
        assert.include(message, `"${size}"`)
      }
    }))

  it.live("SERVICE_API_PGLITE_SHARED_BUFFERS reaches PGlite on either thread", () =>
    Effect.gen(function*() {
      yield* withEnvironment("SERVICE_API_PGLITE_SHARED_BUFFERS", "24MB")
      for (const thread of ["worker", "main"] as const) {
        const rows = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ sharedBuffers: string }>`SHOW shared_buffers`
        }).pipe(Effect.provide(SqlLive.pglite({ thread, dataDir: freshPgliteDataDir() }).pipe(Layer.orDie)))
        assert.strictEqual(rows[0]!.sharedBuffers, "24MB", thread)
      }
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "answers the same with WebAssembly tier-up off (the default) or on, and refuses other values by name",
    () =>
      Effect.gen(function*() {
        const answer = (value: string) =>
          withEnvironment("SERVICE_API_PGLITE_TIER_UP", value).pipe(
            Effect.andThen(opened(freshPgliteDataDir())),
            Effect.flatMap((db) =>
              Effect.promise(() => db.query<{ n: number }>("SELECT count(*)::int AS n FROM generate_series(1, 5000)"))
            ),
            Effect.map((result) => result.rows),
            Effect.scoped
          )
        for (const value of ["", "false", "true"]) assert.deepStrictEqual(yield* answer(value), [{ n: 5000 }], value)
        const refused = yield* withEnvironment("SERVICE_API_PGLITE_TIER_UP", "sometimes").pipe(
          Effect.andThen(Effect.tryPromise(() => openPglite(undefined))),
          Effect.flip,
          Effect.map((error) => String((error as { cause?: unknown }).cause ?? error)),
          Effect.scoped
        )
        assert.include(refused, `SERVICE_API_PGLITE_TIER_UP must be true or false (got "sometimes")`)
      }),
    60_000
  )

  it.live("creates a new data directory and opens it again with its data", () =>
    Effect.gen(function*() {
      const dataDir = Path.join(yield* temporaryDirectory, "nested", "pglite")
      yield* opened(dataDir).pipe(
        Effect.flatMap((db) =>
          Effect.promise(() => db.exec("CREATE TABLE kept (word text); INSERT INTO kept VALUES ('again')"))
        ),
        Effect.scoped
      )
      assert.isTrue(existsSync(Path.join(dataDir, "PG_VERSION")))
      const rows = yield* opened(dataDir).pipe(
        Effect.flatMap((db) => Effect.promise(() => db.query<{ word: string }>("SELECT word FROM kept"))),
        Effect.scoped
      )
      assert.deepStrictEqual(rows.rows, [{ word: "again" }])
    }).pipe(Effect.scoped), 60_000)
})
