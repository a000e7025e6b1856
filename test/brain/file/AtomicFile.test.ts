/**
 * Atomic brain file writes: the target holds the whole new file, and the temporaries of writes a stop or a kill
 * cut short are removed once old enough, while a young one (possibly another node's write in progress) stays.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { removeStaleTemporaries, writeAtomically } from "../../../src/brain/file/AtomicFile.ts"

describe("atomic brain files", () => {
  it.effect("write the whole file and leave no temporary behind", () =>
    Effect.gen(function*() {
      const directory = mkdtempSync(join(tmpdir(), "atomic-"))
      yield* writeAtomically(join(directory, "b.brain"), new Uint8Array([1, 2, 3]))
      assert.deepStrictEqual([...readFileSync(join(directory, "b.brain"))], [1, 2, 3])
      assert.deepStrictEqual(readdirSync(directory), ["b.brain"])
    }))

  it.effect("remove unfinished writes older than the limit and keep younger ones and other files", () =>
    Effect.gen(function*() {
      const directory = mkdtempSync(join(tmpdir(), "atomic-"))
      for (const name of [".brain-old.tmp", ".brain-young.tmp", "a.brain", "notes.tmp"]) {
        writeFileSync(join(directory, name), "x")
      }
      const twoHoursAgo = new Date(Date.now() - 2 * 3600_000)
      for (const name of [".brain-old.tmp", "a.brain", "notes.tmp"]) {
        utimesSync(join(directory, name), twoHoursAgo, twoHoursAgo)
      }
      const removed = yield* removeStaleTemporaries(directory, 3600_000)
      assert.strictEqual(removed, 1)
      assert.deepStrictEqual(readdirSync(directory).sort(), [".brain-young.tmp", "a.brain", "notes.tmp"])
      assert.strictEqual(yield* removeStaleTemporaries(join(directory, "missing"), 0), 0)
    }))
})
