/**
 * After memories were deleted (forget, the expiry and retention sweeps): the brain catches up with the deletions from
 * the change log, then the bank's kept `.brain` file, when it has one, is written again from it, so the file no
 * longer holds what was deleted. A file that cannot be written again is removed (it is rebuilt later) rather than
 * left holding the content. Runs after the deleting transaction committed; never inside it.
 */
import { Effect, Option } from "effect"
import { existsSync } from "node:fs"
import { rm } from "node:fs/promises"
import { BankBrains } from "../../brain/BankBrains.ts"
import { BrainRuntime } from "../../brain/BrainRuntime.ts"

export const makeKeptBrainFile = Effect.gen(function*() {
  const brains = yield* BankBrains
  const runtime = yield* BrainRuntime

  const rewriteFile = (bankId: string) =>
    Effect.gen(function*() {
      const path = runtime.filePath(bankId)
      if (!existsSync(path)) return false
      return yield* runtime.writeFile(bankId, { mode: "incremental" }).pipe(
        Effect.as(true),
        Effect.catchCause(() => Effect.promise(() => rm(path, { force: true })).pipe(Effect.as(false)))
      )
    })

  /** `updated`: a brain is loaded and caught up; `file_rewritten`: the kept file was written again. */
  return Effect.fn("Forgetting.afterDeletion")(function*(bankId: string) {
    const brain = yield* brains.available(bankId)
    const rewritten = yield* rewriteFile(bankId)
    return { updated: Option.isSome(brain), file_rewritten: rewritten }
  })
})
