/** The one-time-job lock: one holder works, the others take its result; a dead holder's lock is taken over. */
import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Option, Ref } from "effect"
import * as Path from "node:path"
import { exclusive } from "../../../../layers/models/embeddings/ConversionLock.ts"

/** A lock path in a fresh directory, and a job that counts its runs and publishes its result. */
const setup = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const dir = yield* fs.makeTempDirectoryScoped({ prefix: "engram-lock-" })
  const runs = yield* Ref.make(0)
  const published = yield* Ref.make(Option.none<string>())
  const job = exclusive({
    lockPath: Path.join(dir, "job.lock"),
    work: Ref.update(runs, (n) => n + 1).pipe(
      Effect.andThen(Effect.sleep("150 millis")),
      Effect.andThen(Ref.set(published, Option.some("result"))),
      Effect.as("result")
    ),
    ready: Ref.get(published)
  })
  return { fs, lockPath: Path.join(dir, "job.lock"), runs, job }
})

describe("ConversionLock", () => {
  it.live("runs the job once for concurrent callers, who all get its result", () =>
    Effect.gen(function*() {
      const { fs, job, lockPath, runs } = yield* setup
      const results = yield* Effect.all([job, job, job], { concurrency: "unbounded" })
      assert.deepStrictEqual(results, ["result", "result", "result"])
      assert.strictEqual(yield* Ref.get(runs), 1)
      assert.isFalse(yield* fs.exists(lockPath))
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("takes over a lock whose holder process is gone", () =>
    Effect.gen(function*() {
      const { fs, job, lockPath, runs } = yield* setup
      yield* fs.writeFileString(lockPath, "2147483646:1700000000000")
      assert.strictEqual(yield* job, "result")
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("takes over a lock left by an earlier process that had this pid", () =>
    Effect.gen(function*() {
      const { fs, job, lockPath, runs } = yield* setup
      yield* fs.writeFileString(lockPath, `${process.pid}:1`)
      assert.strictEqual(yield* job, "result")
      assert.strictEqual(yield* Ref.get(runs), 1)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
